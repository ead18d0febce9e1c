/** How the environment's settings are read where more than one layer reads them (the app's config, the S3 store's). */

type Env = Readonly<Record<string, string | undefined>>;

/** The words a true-or-false setting takes, each standing for `yes` or `no`: a choice setting's words, or some of them. */
export const trueOrFalse = <T>(yes: T, no: T): Readonly<Record<string, T>> => ({ true: yes, 1: yes, yes, on: yes, false: no, 0: no, no, off: no });

/**
 * A setting that takes one of a few words (any case, spaces around ignored), each standing for its
 * value in `choices`; `fallback` when unset or empty; anything else stops the process naming it and
 * what it takes (`described`).
 */
export function choiceSetting<T>(env: Env, name: string, choices: Readonly<Record<string, T>>, fallback: T, described: string): T {
  const text = env[name]?.trim().toLowerCase();
  if (text === undefined || text === '') return fallback;
  if (Object.hasOwn(choices, text)) return choices[text]!;
  throw new Error(`${name} must be ${described} (got ${JSON.stringify(env[name])}).`);
}

const BOOLEAN = trueOrFalse(true, false);

/** A true-or-false setting: `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`, as `choiceSetting` reads them. */
export const booleanSetting = (env: Env, name: string, fallback: boolean): boolean => choiceSetting(env, name, BOOLEAN, fallback, 'true or false');
