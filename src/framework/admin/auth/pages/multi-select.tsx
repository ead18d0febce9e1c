/**
 * Django's filtered multi-select (`filter_horizontal`) as a plain `<select multiple>`: it works
 * without JavaScript; the admin's filter script (static/admin-filter.js) shows a box above it that
 * hides the choices not matching what is typed. The choices the form was shown with ride along in
 * hidden `initial_<name>` fields, so saving changes only what this editor changed (grants.ts).
 */
import { Errors } from '../../../render/browsable/fields.js';

export interface Choice {
  readonly value: string;
  readonly label: string;
}

/** The hidden field that carries what the form was shown with. */
export const initialField = (name: string): string => `initial_${name}`;
/** The text box for names that are not among the choices (an app's own permission names). */
export const otherField = (name: string): string => `${name}_other`;

export function MultiSelect(props: { name: string; label: string; choices: readonly Choice[]; selected: readonly string[]; initial: readonly string[]; errors?: readonly string[]; other?: string }) {
  const { name, choices } = props;
  const id = `id_${name}`;
  const selected = new Set(props.selected);
  return (
    <fieldset class="field multi-select">
      <legend>{props.label}</legend>
      <input type="search" class="choice-filter" data-filter-for={id} aria-label={`Filter ${props.label}`} placeholder="Filter" hidden />
      <select id={id} name={name} multiple size={Math.min(15, Math.max(4, choices.length))} aria-describedby={`${id}_help`}>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value} selected={selected.has(choice.value)}>
            {choice.label}
          </option>
        ))}
      </select>
      <small id={`${id}_help`}>Hold down “Control”, or “Command” on a Mac, to select more than one.</small>
      {props.other && (
        <label class="field" for={`${id}_other`}>
          <span>{props.other}</span>
          <input type="text" id={`${id}_other`} name={otherField(name)} />
        </label>
      )}
      {props.initial.map((value) => (
        <input key={value} type="hidden" name={initialField(name)} value={value} />
      ))}
      <Errors messages={props.errors} />
    </fieldset>
  );
}
