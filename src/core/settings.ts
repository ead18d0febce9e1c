/** How the environment's settings are read where more than one layer reads them (the app's config, the S3 store's). */

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A true-or-false setting: `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off` (any case, spaces
 * around ignored); `fallback` when unset or empty; anything else stops the process naming it.
 */
export function booleanSetting(env: Env, name: string, fallback: boolean): boolean {
  const text = env[name]?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  throw new Error(`${name} must be true or false (got ${JSON.stringify(env[name])}).`);
}
