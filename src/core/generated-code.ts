/**
 * Functions made once from source text, specialised to a declaration (a serializer's fields, a
 * model's columns, a selection's joins), as ajv and fast-json-stringify compile a schema. The
 * source holds only declared names, each written by `literal` as a string literal, and constant
 * messages; every value and function it uses is passed in, so no request text ever becomes code.
 */

/** A name the source may hold as a key: `__proto__` an object literal or an assignment would take for the prototype. */
export const compilable = (name: string): boolean => name !== '__proto__';

/** A declared name as a string literal of the source. */
export const literal = (text: string): string => JSON.stringify(text);

/**
 * The function `source` returns, given `parameters` bound to `values`; undefined where the process
 * forbids making code from text (node --disallow-code-generation-from-strings): the caller then
 * keeps its interpreted form, which answers the same.
 */
export function generated(parameters: readonly string[], source: string, values: readonly unknown[]): unknown {
  let make: (...values: unknown[]) => unknown;
  try {
    // Built from declared names and the caller's functions only (see the module's comment).
    make = new Function(...parameters, source) as (...values: unknown[]) => unknown;
  } catch (error) {
    if (error instanceof EvalError) return undefined;
    throw error;
  }
  return make(...values);
}
