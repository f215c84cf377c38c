/** lunr-languages ships no types: each file exports a function that registers itself on a lunr object. */
declare module 'lunr-languages/lunr.stemmer.support.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.es.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.da.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.de.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.fi.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.hu.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.pt.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.sv.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
