// Validates an OpenAPI document (read from stdin) against the official OAS 3.1 schema.
// @seriousme/openapi-schema-validator is ESM-only, so CommonJS jest runs it through this script.
import { Validator } from '@seriousme/openapi-schema-validator';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const result = await new Validator().validate(JSON.parse(input));
process.stdout.write(JSON.stringify(result));
