// plotly.js-dist-min ships the full plotly bundle without types; @types/plotly.js describes the
// same API under the module name 'plotly.js', so the minified bundle borrows those types.
declare module 'plotly.js-dist-min' {
  import * as Plotly from 'plotly.js';
  export default Plotly;
}
