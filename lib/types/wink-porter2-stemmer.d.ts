// Minimal typings for wink-porter2-stemmer (the Porter2 / Snowball English stemmer); the package ships none.
declare module 'wink-porter2-stemmer' {
  export default function stem(word: string): string;
}
