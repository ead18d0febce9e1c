/**
 * A module loaded when first needed, then kept: each `import()` asks the module loader again,
 * through its hooks' thread when an app is loaded by tsx, and the request that asked waits on it.
 */
export function loadedOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}
