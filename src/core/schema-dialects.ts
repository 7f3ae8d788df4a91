import { Ajv, type Options, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The `$schema` of JSON Schema 2020-12, MCP's default dialect, which the SDK v2 writes into every schema. */
const DRAFT_2020_12 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

/**
 * Compiles JSON Schemas in the dialect each one names: 2020-12 when its `$schema`
 * says so (servers on the MCP SDK v2 do, for every tool and form), Ajv's draft-07
 * otherwise, as before. Both share the options and the formats `setup` adds.
 */
export class SchemaDialects {
  private readonly draft07: Ajv;
  private readonly draft2020: Ajv2020;

  constructor(options: Options, setup: (ajv: Ajv | Ajv2020) => void = () => undefined) {
    this.draft07 = new Ajv(options);
    this.draft2020 = new Ajv2020(options);
    setup(this.draft07);
    setup(this.draft2020);
  }

  /** Compiles a schema with the Ajv of its dialect; throws as Ajv does for a schema it cannot read. */
  compile(schema: Record<string, unknown>): ValidateFunction {
    const dialect = typeof schema.$schema === "string" && DRAFT_2020_12.test(schema.$schema);
    return (dialect ? this.draft2020 : this.draft07).compile(schema);
  }
}
