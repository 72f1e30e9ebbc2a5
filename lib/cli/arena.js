'use strict'
// The local arena `agent create -d <domain> -n <N>` picks genes from (R-RUN-7), as upstream's
// agent create ranks them: every readable gene of the project (of the domain, when one is given),
// by an estimated fitness, highest first. Nothing is run to rank them: upstream's estimate is
// derived from the Gene ID, F = min(0.70 + (first 8 hex digits mod 250) / 1000, 0.99), times the
// fidelity discount of its protocol (Native 1.0, Hybrid 0.85, Wrapped or none 0.7). It is
// deterministic: the same genes give the same ranking on every machine, and any change to a
// phenotype gives it a new place.

const { readGene, geneFolders } = require('./project')

const ESTIMATED_BASE_FITNESS = 0.7
const FIDELITY_DISCOUNT = { native: 1.0, hybrid: 0.85, wrapped: 0.7 }

/** Upstream's estimate for a gene with v2 id `id` and `fidelity` (a string or null). */
function estimatedFitness(id, fidelity) {
  const seed = parseInt(id.replace(/^v2:/, '').slice(0, 8), 16)
  const base = Math.min(ESTIMATED_BASE_FITNESS + (seed % 250) / 1000, 0.99)
  const discount = FIDELITY_DISCOUNT[String(fidelity || '').trim().toLowerCase()] || FIDELITY_DISCOUNT.wrapped
  return base * discount
}

/**
 * The project's genes of `domain` (exactly that domain, as upstream's filter; every gene when
 * `domain` is undefined), ranked: `[{ name, domain, fidelity, fitness }]`, highest fitness first,
 * ties by name. A folder that does not read as a gene is left out, as upstream skips it.
 */
function rankGenes(root, domain) {
  const ranked = []
  for (const folder of geneFolders(root)) {
    let gene
    try {
      gene = readGene(root, folder)
    } catch {
      continue
    }
    if (domain !== undefined && gene.domain !== domain) continue
    ranked.push({ name: gene.name, domain: gene.domain, fidelity: gene.fidelity || 'Wrapped', fitness: estimatedFitness(gene.id, gene.fidelity) })
  }
  return ranked.sort((a, b) => b.fitness - a.fitness || (a.name < b.name ? -1 : 1))
}

module.exports = { estimatedFitness, rankGenes }
