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
declare module 'lunr-languages/lunr.fr.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.hu.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.it.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.nl.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.no.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.pt.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.ro.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.ru.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.sv.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
declare module 'lunr-languages/lunr.tr.js' {
  const register: (lunr: unknown) => void;
  export default register;
}
