-- The list references of a package's targeting_overlay (property_list, collection_list, collection_list_exclude),
-- as the buyer sent them on create_media_buy or last replaced them with update_media_buy (auth tokens not kept).
ALTER TABLE sales_packages ADD COLUMN targeting_overlay jsonb;
