import { describe, expect, it } from "vitest";
import { formContent, formFields } from "../../web/src/ui/form-fields.js";

const schema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", description: "Who you are", minLength: 1 },
    email: { type: "string", format: "email" },
    count: { type: "integer", title: "How many", minimum: 1, maximum: 9, default: 3 },
    ratio: { type: "number" },
    agree: { type: "boolean", title: "I agree" },
    colour: { type: "string", enum: ["red", "green"] },
    size: {
      type: "string",
      oneOf: [
        { const: "s", title: "Small" },
        { const: "l", title: "Large" },
      ],
    },
    tags: {
      type: "array",
      items: {
        anyOf: [
          { const: "x", title: "X" },
          { const: "y", title: "Y" },
        ],
      },
    },
    blob: { type: "object" },
  },
  required: ["name", "colour"],
};

describe("elicitation form fields", () => {
  it("reads every supported property type, in order, with labels, hints and defaults", () => {
    const fields = formFields(schema);
    expect(fields.map((f) => [f.name, f.kind, f.label, f.required])).toEqual([
      ["name", "text", "Name", true],
      ["email", "text", "email", false],
      ["count", "number", "How many", false],
      ["ratio", "number", "ratio", false],
      ["agree", "boolean", "I agree", false],
      ["colour", "choice", "colour", true],
      ["size", "choice", "size", false],
      ["tags", "multi", "tags", false],
      ["blob", "unsupported", "blob", false],
    ]);
    expect(fields[0]).toMatchObject({ hint: "Who you are", minLength: 1, initial: "" });
    expect(fields[1]).toMatchObject({ inputMode: "email" });
    expect(fields[2]).toMatchObject({ integer: true, min: 1, max: 9, initial: "3" });
    // A required choice starts on its first option; an optional one starts empty.
    expect(fields[5]).toMatchObject({
      initial: "red",
      choices: [
        { value: "red", label: "red" },
        { value: "green", label: "green" },
      ],
    });
    expect(fields[6]).toMatchObject({
      initial: "",
      choices: [
        { value: "s", label: "Small" },
        { value: "l", label: "Large" },
      ],
    });
    expect(fields[7]).toMatchObject({
      initial: [],
      choices: [
        { value: "x", label: "X" },
        { value: "y", label: "Y" },
      ],
    });
  });

  it("answers with values of the schema's types and leaves empty optional fields out", () => {
    const fields = formFields(schema);
    const content = formContent(fields, { name: "Ada", email: "", count: "4", ratio: "0.5", agree: true, colour: "green", size: "", tags: ["y"] });
    expect(content).toEqual({ name: "Ada", count: 4, ratio: 0.5, agree: true, colour: "green", tags: ["y"] });
  });

  it("reads a schema that is not one as having no fields", () => {
    expect(formFields(undefined)).toEqual([]);
    expect(formFields({ properties: "nope" })).toEqual([]);
    expect(formFields({ properties: { x: 42 } })).toMatchObject([{ name: "x", kind: "text" }]);
  });
});
