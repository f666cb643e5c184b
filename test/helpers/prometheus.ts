// A strict reader of the Prometheus text exposition format (0.0.4), for tests of /metrics: every
// line must be a HELP, a TYPE or a sample of a declared family, with well-formed labels and a
// number; anything else throws, naming the line.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type Families = Map<string, { type: string; help: string; samples: Sample[] }>;

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(?:,|$)/;
const SUFFIXES = ['_bucket', '_count', '_sum', '_total', '_created'];

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = LABEL.exec(rest);
    if (!match) throw new Error(`bad labels in line: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    rest = rest.slice(match[0].length);
  }
  return labels;
}

export function parseExposition(text: string): Families {
  const families: Families = new Map();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
    if (meta) {
      const family = families.get(meta[2]!) ?? { type: 'untyped', help: '', samples: [] };
      if (meta[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(meta[3]!)) throw new Error(`bad type in line: ${line}`);
        family.type = meta[3]!;
      } else family.help = meta[3]!;
      families.set(meta[2]!, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    // Prometheus reads values with Go's ParseFloat: NaN and Inf in any case (prom-client writes "Nan").
    const word = match[3]!.toLowerCase();
    const value = word === '+inf' || word === 'inf' ? Infinity : word === '-inf' ? -Infinity : word === 'nan' ? NaN : Number(match[3]);
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`bad value in line: ${line}`);
    const name = match[1]!;
    const familyName = families.has(name) ? name : SUFFIXES.map((s) => (name.endsWith(s) ? name.slice(0, -s.length) : '')).find((n) => n && families.has(n));
    if (!familyName) throw new Error(`a sample of no declared family: ${line}`);
    families.get(familyName)!.samples.push({ name, labels: labelsOf(match[2] ?? '', line), value });
  }
  return families;
}

/** The value of the sample `name` whose labels include `labels`, summed over the rest; undefined when none. */
export function sample(families: Families, name: string, labels: Record<string, string>): number | undefined {
  let found: number | undefined;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name || !Object.entries(labels).every(([k, v]) => s.labels[k] === v)) continue;
      found = (found ?? 0) + s.value;
    }
  }
  return found;
}
