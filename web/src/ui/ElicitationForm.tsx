import { useMemo, useState } from "preact/hooks";
import { formValuesOf, keepFormValues } from "./answering.js";
import { formContent, formFields, type FieldValue, type FormField } from "./form-fields.js";

/**
 * A form question rendered from its `requestedSchema`; Submit accepts with the values, Decline declines. What is
 * typed is kept by question (`answering.ts`): shown again, it is as it was left.
 */
export function ElicitationForm({
  questionId,
  idPrefix,
  schema,
  disabled,
  onAccept,
  onDecline,
}: {
  questionId: string;
  idPrefix: string;
  schema: unknown;
  disabled: boolean;
  onAccept: (content: Record<string, unknown>) => void;
  onDecline: () => void;
}) {
  const fields = useMemo(() => formFields(schema), [schema]);
  const [values, setValues] = useState<Record<string, FieldValue>>(
    () => formValuesOf(questionId) ?? Object.fromEntries(fields.flatMap((f) => (f.kind === "unsupported" ? [] : [[f.name, f.initial]]))),
  );
  const submit = (event: Event): void => {
    event.preventDefault();
    onAccept(formContent(fields, values));
  };
  return (
    <form class="elicitation" onSubmit={submit}>
      {fields.map((field) => (
        <Field
          key={field.name}
          id={`${idPrefix}-${field.name}`}
          field={field}
          value={values[field.name]}
          onChange={(value) =>
            setValues((current) => {
              const next = { ...current, [field.name]: value };
              keepFormValues(questionId, next);
              return next;
            })
          }
        />
      ))}
      <div class="choices">
        <button type="submit" class="primary" disabled={disabled}>
          Submit
        </button>
        <button type="button" disabled={disabled} onClick={onDecline}>
          Decline
        </button>
      </div>
    </form>
  );
}

function Field({
  id,
  field,
  value,
  onChange,
}: {
  id: string;
  field: FormField;
  value: FieldValue | undefined;
  onChange: (value: FieldValue) => void;
}) {
  const hintId = field.hint ? `${id}-hint` : undefined;
  const hint = field.hint ? <small id={hintId}>{field.hint}</small> : null;
  switch (field.kind) {
    case "boolean":
      return (
        <div class="field check">
          <input id={id} type="checkbox" checked={value === true} aria-describedby={hintId} onChange={(e) => onChange(e.currentTarget.checked)} />
          <label for={id}>{field.label}</label>
          {hint}
        </div>
      );
    case "multi": {
      const selected = Array.isArray(value) ? value : [];
      return (
        <fieldset class="field" aria-describedby={hintId}>
          <legend>{field.label}</legend>
          {field.choices.map((choice, i) => (
            <div class="check" key={choice.value}>
              <input
                id={`${id}-${i}`}
                type="checkbox"
                checked={selected.includes(choice.value)}
                onChange={(e) => onChange(e.currentTarget.checked ? [...selected, choice.value] : selected.filter((v) => v !== choice.value))}
              />
              <label for={`${id}-${i}`}>{choice.label}</label>
            </div>
          ))}
          {hint}
        </fieldset>
      );
    }
    case "choice":
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <select
            id={id}
            required={field.required}
            value={String(value ?? "")}
            aria-describedby={hintId}
            onChange={(e) => onChange(e.currentTarget.value)}
          >
            {field.required ? null : <option value="">—</option>}
            {field.choices.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
          {hint}
        </div>
      );
    case "unsupported":
      return (
        <p class="field muted">
          {field.label}: fields of type “{field.type}” cannot be answered here.
        </p>
      );
    case "number":
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <input
            id={id}
            type="number"
            step={field.integer ? 1 : "any"}
            min={field.min}
            max={field.max}
            required={field.required}
            value={String(value ?? "")}
            aria-describedby={hintId}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
          {hint}
        </div>
      );
    case "text":
      return (
        <div class="field">
          <label for={id}>{field.label}</label>
          <input
            id={id}
            type="text"
            inputMode={field.inputMode}
            minLength={field.minLength}
            maxLength={field.maxLength}
            required={field.required}
            value={String(value ?? "")}
            aria-describedby={hintId}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
          {hint}
        </div>
      );
  }
}
