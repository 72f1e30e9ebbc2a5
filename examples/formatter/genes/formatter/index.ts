import type { GeneContext } from "@rotifer/playground/memory";

// The formatter gene: it remembers the indent width the user last asked for (a PREFERENCE
// entry, never evicted), and uses it when a later request gives none.
const KEY = "formatter/indent";

export function express(
  input: { code: string; indent?: number },
  ctx: GeneContext,
): { formatted: string; indent: number } {
  let indent = input.indent;

  if (indent === undefined) {
    const saved = ctx.memory.readMemory(KEY, "PREFERENCE");
    indent = saved ? Number(new TextDecoder().decode(saved.value)) : 2;
  } else {
    ctx.memory.writeMemory(
      KEY,
      new TextEncoder().encode(String(indent)),
      "PREFERENCE",
    );
  }

  return { formatted: reindent(input.code, indent), indent };
}

/**
 * Re-indents `code` with `indent` spaces per level. The nesting level of a line is read from
 * its leading whitespace: a tab is one level, and runs of spaces are measured in the smallest
 * step the code uses (its own indent unit). Blank lines become empty.
 */
function reindent(code: string, indent: number): string {
  if (!Number.isInteger(indent) || indent < 0 || indent > 16) {
    throw new RangeError(`indent must be a whole number from 0 to 16, not ${indent}`);
  }
  const lines = code.split(/\r?\n/);
  const leading = (line: string) => /^[ \t]*/.exec(line)![0];
  const spaces = (ws: string) => ws.replace(/\t/g, "").length;
  const tabs = (ws: string) => ws.length - spaces(ws);

  const steps = lines
    .filter((line) => line.trim() !== "")
    .map((line) => spaces(leading(line)))
    .filter((n) => n > 0);
  const unit = steps.length > 0 ? steps.reduce(gcd) : 1;

  return lines
    .map((line) => {
      if (line.trim() === "") return "";
      const ws = leading(line);
      const level = tabs(ws) + Math.round(spaces(ws) / unit);
      return " ".repeat(level * indent) + line.slice(ws.length);
    })
    .join("\n");
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
