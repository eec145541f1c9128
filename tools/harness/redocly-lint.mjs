// Lints an OpenAPI document (read from stdin) with Redocly's recommended rules; prints the problems as JSON.
// @redocly/openapi-core is ESM-only, so CommonJS jest runs it through this script.
import { createConfig, lintFromString } from '@redocly/openapi-core';

let source = '';
for await (const chunk of process.stdin) source += chunk;
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
process.stdout.write(
  JSON.stringify(problems.map((p) => ({ rule: p.ruleId, pointer: p.location[0]?.pointer ?? '', message: p.message }))),
);
