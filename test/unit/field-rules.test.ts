/**
 * Fields' declared rules (core/fields.ts validation and withRange, core/field-kinds.ts): each kind's
 * bounds compared as its values are, lengths in characters, patterns compiled once and searched,
 * validators' messages in their order whenever each answers.
 */
import { describe, expect, it } from 'vitest';
import { FieldError, fields, type Field } from '../../src/framework/index.js';

/** What `field` makes of a body's `value`: the value, or the messages it is refused with. */
async function checked(field: Field, value: unknown): Promise<unknown> {
  try {
    const parsed = await field.parse(value);
    await field.validate?.(parsed);
    return parsed;
  } catch (error) {
    if (error instanceof FieldError) return error.messages;
    throw error;
  }
}

describe('bounds', () => {
  it('compare big integers beyond 2^53 exactly', async () => {
    const big = fields.bigint({ minValue: 9007199254740993n, maxValue: '9223372036854775807' });
    expect(await checked(big, '9007199254740993')).toBe('9007199254740993');
    expect(await checked(big, '9007199254740992')).toEqual(['Ensure this value is greater than or equal to 9007199254740993.']);
    expect(big.limits).toEqual({ minValue: '9007199254740993', maxValue: '9223372036854775807' });
  });

  it('compare times and durations as what they are', async () => {
    const opening = fields.time({ minValue: '09:00', maxValue: '17:30' });
    expect(await checked(opening, '09:00:00.5')).toBe('09:00:00.5');
    expect(await checked(opening, '08:59:59.999')).toEqual(['Ensure this value is greater than or equal to 09:00.']);
    expect(await checked(opening, '17:30:01')).toEqual(['Ensure this value is less than or equal to 17:30.']);
    const wait = fields.duration({ minValue: 'PT1M' });
    expect(await checked(wait, 'PT60S')).toBe(60);
    expect(await checked(wait, 'PT59.999S')).toEqual(['Ensure this value is greater than or equal to PT1M.']);
    expect(wait.limits).toEqual({ minValue: 'PT1M' });
  });

  it('keep the tighter of a decimal’s declared bounds and its column’s in its schema', () => {
    const rate = fields.decimal({ digits: 3, places: 1, asNumber: true, minValue: 0 });
    expect(rate.schema).toMatchObject({ minimum: 0, maximum: 99.9 });
  });
});

describe('lengths and patterns', () => {
  it('count a minimum length in characters', async () => {
    const name = fields.string({ minLength: 3 });
    expect(await checked(name, '😀😀')).toEqual(['Ensure this field has at least 3 characters.']);
    expect(await checked(name, '😀😀😀')).toBe('😀😀😀');
    expect(await checked(name, 'abc')).toBe('abc');
  });

  it('match a global RegExp the same way every time', async () => {
    const code = fields.string({ pattern: /\d/g });
    for (let round = 0; round < 3; round++) expect(await checked(code, 'a1')).toBe('a1');
    expect(await checked(code, 'ab')).toEqual(['This value does not match the required pattern.']);
  });

  it('keep the message a declaration gives', async () => {
    const code = fields.string({ pattern: '^[a-z]+$', patternMessage: 'Lower case only.' });
    expect(await checked(code, 'aB')).toEqual(['Lower case only.']);
  });

  it('run in linear time: a pattern a backtracking engine takes exponential time on answers at once', async () => {
    const nested = fields.string({ pattern: /^(a+)+$/ });
    expect(await checked(nested, `${'a'.repeat(10_000)}b`)).toEqual(['This value does not match the required pattern.']);
    expect(await checked(nested, 'aaa')).toBe('aaa');
    // Flags keep their meaning.
    expect(await checked(fields.string({ pattern: /^ab$/i }), 'AB')).toBe('AB');
    expect(await checked(fields.string({ pattern: '^\\p{L}+$' }), 'été')).toBe('été');
  });

  it('refuse at declaration what no linear-time engine runs: lookarounds, backreferences', () => {
    expect(() => fields.string({ pattern: /(?<=a)b/ })).toThrow(/pattern \/\(\?<=a\)b\/ cannot be matched in linear time/);
    expect(() => fields.string({ pattern: /(a)\1/ })).toThrow(/linear time/);
  });

  it('keep a slug’s format part of parsing: refused wherever a slug names a record', () => {
    expect(() => fields.slug().parse('not a slug')).toThrow(FieldError);
    expect(fields.slug().validate).toBeUndefined();
  });
});

describe('validators', () => {
  it('report messages in the declared order, whichever answers first', async () => {
    const field = fields.string({
      validators: [
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return 'first';
        },
        () => ['second', 'third'],
        () => Promise.reject(new FieldError('fourth')),
        () => undefined,
      ],
    });
    expect(await checked(field, 'x')).toEqual(['first', 'second', 'third', 'fourth']);
  });

  it('answer at once while every validator does', () => {
    const field = fields.integer({ minValue: 0, validators: [(value) => (value % 2 ? 'Even numbers only.' : undefined)] });
    expect(field.validate!(2)).toBeUndefined();
    expect(() => field.validate!(-1)).toThrow(new FieldError('Ensure this value is greater than or equal to 0.', 'Even numbers only.'));
  });

  it('throw on what is no FieldError', async () => {
    const field = fields.string({
      validators: [
        () => {
          throw new TypeError('a bug');
        },
      ],
    });
    await expect(checked(field, 'x')).rejects.toThrow(TypeError);
  });

  it('are absent where nothing is declared', () => {
    expect(fields.integer().validate).toBeUndefined();
    expect(fields.string({ maxLength: 3 }).limits).toBeUndefined();
  });
});
