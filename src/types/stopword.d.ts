/** The `stopword` package ships no types; this is the list Limbic reads. */
declare module 'stopword' {
  /** English stopwords, lower case. */
  export const eng: readonly string[];
}
