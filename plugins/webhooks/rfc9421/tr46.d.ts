// tr46 ships no types; only the function used here is declared.
declare module 'tr46' {
  export function toASCII(
    domain: string,
    options?: { checkHyphens?: boolean; checkBidi?: boolean; checkJoiners?: boolean; useSTD3ASCIIRules?: boolean; verifyDNSLength?: boolean; transitionalProcessing?: boolean },
  ): string | null;
}
