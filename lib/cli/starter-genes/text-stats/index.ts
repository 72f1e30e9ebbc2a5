import type { GeneContext } from "@rotifer/playground/memory";

// Counts the words, lines and characters of a text, and keeps running totals in the agent's
// memory: how many texts it has counted, and how many words in all.
const TOTALS = "text-stats/totals";

interface Totals { texts: number; words: number }

export function express(
  input: { text: string },
  ctx: GeneContext,
): { words: number; lines: number; characters: number; texts: number; totalWords: number } {
  const words = input.text.split(/\s+/).filter((w) => w !== "").length;
  const lines = input.text === "" ? 0 : input.text.replace(/\r?\n$/, "").split(/\r?\n/).length;
  const characters = [...input.text].length;

  const saved = ctx.memory.readMemory(TOTALS, "PATTERN");
  const before: Totals = saved ? JSON.parse(new TextDecoder().decode(saved.value)) : { texts: 0, words: 0 };
  const totals: Totals = { texts: before.texts + 1, words: before.words + words };
  ctx.memory.writeMemory(TOTALS, new TextEncoder().encode(JSON.stringify(totals)), "PATTERN");

  return { words, lines, characters, texts: totals.texts, totalWords: totals.words };
}
