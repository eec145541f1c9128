// Text others wrote reaches operators' terminals: a subscription's description (set through its portal link), a
// receiver's reply, a plant's name, a dead letter's value. A terminal obeys the control characters in what it is
// given (ESC ] 0 ; … BEL retitles the window, ESC [ 2 J clears it, CR and cursor moves overwrite what was printed,
// some sequences write the clipboard), so whoever wrote that text could rewrite what the operator sees. Every text
// output of Plant Store's own (the CLI, the logs, the console's copy buttons) goes through these instead, which
// show each control character as an escape, `\x1b`: seen, never obeyed.

/** C0 controls but tab and line feed, DEL, and C1 controls (a terminal may take U+009B for ESC [). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS_BUT_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** Every C0 control, DEL and C1. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS = /[\x00-\x1f\x7f-\x9f]/g;
/** What JSON.stringify leaves as it is of those: DEL and C1 (it escapes C0 itself). */
const RAW_IN_JSON = /[\x7f-\x9f]/g;

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(2, '0');

/** Text of many lines (a body, a reply): every control character shown as `\xNN`, but tab and line feed. */
export const visibleText = (text: string): string => text.replace(CONTROLS_BUT_LINES, (c) => `\\x${hex(c)}`);

/** One line (a table cell, a `key: value` line): tab and line feed too, so no value can fake a row of its own. */
export const visibleLine = (text: string): string => text.replace(CONTROLS, (c) => `\\x${hex(c)}`);

/**
 * JSON text (JSON.stringify's) with DEL and C1 escaped as `\u00NN` too: the same value to a parser, and nothing
 * in it a terminal obeys.
 */
export const visibleJson = (json: string): string => json.replace(RAW_IN_JSON, (c) => `\\u00${hex(c)}`);
