/**
 * A Node module hook (node:module's register) under tsx's: an app's `.ts` modules (the app, its
 * migrations, what they import) load as ES modules whatever the nearest package.json's "type"
 * says. `npm init -y` writes "type": "commonjs", under which Node would hand an `import`/`export`
 * app.ts to its CommonJS loader, which cannot require an ES module in the middle of importing it;
 * compiling the app to CommonJS instead (tsx's own way) would load a second copy of Restfold beside
 * the CLI's, and no app object made by one is known to the other. `.cts` stays CommonJS, and
 * packages' own files keep their package's format.
 */
import type { LoadHook } from 'node:module';

const APP_TYPESCRIPT = /\.ts$/;

export const load: LoadHook = (url, context, nextLoad) => {
  if (!url.startsWith('file:')) return nextLoad(url, context);
  const { pathname } = new URL(url);
  if (!APP_TYPESCRIPT.test(pathname) || pathname.includes('/node_modules/')) return nextLoad(url, context);
  return nextLoad(url, { ...context, format: 'module' });
};
