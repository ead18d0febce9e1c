/** Django's save buttons under a change form, and its Delete link where the record may be deleted; `addAnother` where there is an add form to go on to. */
export function SaveButtons(props: { addAnother: boolean; deleteHref?: string }) {
  return (
    <div class="actions">
      <button type="submit" name="_save">
        Save
      </button>
      {props.addAnother && (
        <button type="submit" name="_addanother" class="secondary">
          Save and add another
        </button>
      )}
      <button type="submit" name="_continue" class="secondary">
        Save and continue editing
      </button>
      {props.deleteHref && (
        <a class="danger" href={props.deleteHref}>
          Delete
        </a>
      )}
    </div>
  );
}
