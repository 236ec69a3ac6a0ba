/** The lowercase domain pattern AdCP's schemas give domain fields (publisher_domain, data_provider_domain, brand domain). */
export const DOMAIN_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
