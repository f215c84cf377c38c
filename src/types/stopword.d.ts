/** The `stopword` package ships no types; these are the two lists Limbic reads. */
declare module 'stopword' {
  /** English stopwords, lower case. */
  export const eng: readonly string[];
  /** Spanish stopwords, lower case, accents as written. */
  export const spa: readonly string[];
}
