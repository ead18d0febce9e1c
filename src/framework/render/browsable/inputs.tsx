/**
 * Form inputs of the field kinds that have a control of their own (core/field-kinds.ts): a
 * `<select>` of a choice's values, the browser's date and time pickers, a number input stepping by
 * a decimal's places. /api/static/browsable.js reads each back into JSON by its `data-kind`.
 */
import type { JSX } from 'preact';
import type { Field } from '../../../core/fields.js';
import { stringifyJson } from '../../../core/json.js';

export interface InputProps {
  readonly id: string;
  readonly name: string;
  readonly 'data-kind': string;
}

/** A decimal's step: one unit of its last place (`0.01` for two places). */
const stepOf = (places: number): string => (places === 0 ? '1' : `0.${'1'.padStart(places, '0')}`);

/** The kind's own input showing `shown` (its rendered value as text), or undefined where a text box serves. */
export function kindInput(field: Field, common: InputProps, value: unknown, shown: string): JSX.Element | undefined {
  switch (field.kind) {
    case 'choice':
      return (
        <select {...common}>
          {field.required !== 'always' || value === undefined ? <option value="">---------</option> : null}
          {(field.choices ?? []).map((choice) => (
            <option key={choice} value={choice} selected={choice === shown}>
              {choice}
            </option>
          ))}
        </select>
      );
    case 'date':
      return <input type="date" {...common} value={shown} />;
    case 'time':
      return <input type="time" step="0.001" {...common} value={shown} />;
    case 'duration':
      return <input type="text" {...common} value={shown} placeholder="P1DT2H30M" />;
    case 'decimal':
      return <input type="number" step={stepOf(field.column.places ?? 0)} {...common} value={shown} />;
    case 'float':
      return <input type="number" step="any" {...common} value={shown} />;
    case 'bigint':
      // Text: a number input would round digits beyond 2^53.
      return <input type="text" inputMode="numeric" pattern="-?[0-9]+" {...common} value={shown} />;
    case 'url':
      return <input type="url" {...common} value={shown} />;
    case 'json':
      return (
        <textarea {...common} rows={4}>
          {value === undefined || value === null ? '' : stringifyJson(value, 2)}
        </textarea>
      );
    default:
      return undefined;
  }
}
