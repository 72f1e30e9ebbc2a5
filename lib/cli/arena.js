'use strict'
// The local arena `agent create -d <domain> -n <N>` picks genes from (R-RUN-7), as upstream's
// agent create ranks them: every readable gene of the project (of the domain, when one is given),
// by an estimated fitness, highest first. Nothing is run to rank them: upstream's estimate is
// derived from the phenotype's hash, F = min(0.70 + (first 8 hex digits mod 250) / 1000, 0.99), times the
// fidelity discount of its protocol (Native 1.0, Hybrid 0.85, Wrapped or none 0.7). It is
// deterministic: the same genes give the same ranking on every machine, and any change to a
// phenotype gives it a new place. The hash is upstream's getArenaRankings': SHA-256 of the
// phenotype as it is, sorted keys, irHash included (so not the Gene ID, which leaves irHash out:
// compiling a gene moves it).

const { createHash } = require('node:crypto')
const { readGene, geneFolders } = require('./project')
const { canonicalJson } = require('../formats/phenotype')

const ESTIMATED_BASE_FITNESS = 0.7
const FIDELITY_DISCOUNT = { native: 1.0, hybrid: 0.85, wrapped: 0.7 }

/** The hex upstream's arena derives a gene's estimate from: its whole phenotype's hash. */
function arenaHash(phenotype) {
  return createHash('sha256').update(canonicalJson(phenotype), 'utf8').digest('hex')
}

/** Upstream's estimate for a gene whose arena hash (hex, or `v2:` and hex) is `hash`, and `fidelity` (a string or null). */
function estimatedFitness(hash, fidelity) {
  const seed = parseInt(hash.replace(/^v2:/, '').slice(0, 8), 16)
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
    ranked.push({ name: gene.name, domain: gene.domain, fidelity: gene.fidelity || 'Wrapped', fitness: estimatedFitness(arenaHash(gene.phenotype), gene.fidelity) })
  }
  return ranked.sort((a, b) => b.fitness - a.fitness || (a.name < b.name ? -1 : 1))
}

module.exports = { arenaHash, estimatedFitness, rankGenes }
