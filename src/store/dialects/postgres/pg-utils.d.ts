/** pg's value mapping for bound parameters (`pg/lib/utils`, exported by its package but not typed by @types/pg). */
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
