import type { GeneContext } from "@rotifer/playground/memory";

// Greets by name, and remembers in the agent's memory how many times it greeted each name.
// Memory belongs to an agent, so run the gene in one, twice:
//   rotifer agent create greeter -g hello-world
//   rotifer agent run greeter --input '{"name":"world"}'
// (rotifer run hello-world runs it outside any agent, where every memory call is denied.)
export function express(input: { name: string }, ctx: GeneContext): { greeting: string; visits: number } {
  const key = `hello-world/visits/${input.name}`;
  const saved = ctx.memory.readMemory(key, "CONTEXT");
  const visits = saved ? Number(new TextDecoder().decode(saved.value)) + 1 : 1;
  ctx.memory.writeMemory(key, new TextEncoder().encode(String(visits)), "CONTEXT");
  const greeting = visits === 1
    ? `Hello, ${input.name}! This gene runs in the Rotifer playground.`
    : `Hello again, ${input.name}! Visit ${visits}: this gene remembers you.`;
  return { greeting, visits };
}
