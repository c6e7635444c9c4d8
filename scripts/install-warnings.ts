/**
 * The warnings of an `npm ci` log (.ci/run: a clean install prints none), one per line on stdout.
 * An engine notice about Node is left out when Bun, which runs every package of vidq (its Node API
 * level is `process.version` here), satisfies the range: npm checks the Node that runs npm itself.
 */
const log = await Bun.file(process.argv[2]!).text();
const lines = log.split('\n').filter((l) => /^npm (warn|error)/i.test(l));
const out: string[] = [];
for (let i = 0; i < lines.length; i++) {
  const start = /^npm warn EBADENGINE Unsupported engine \{/.exec(lines[i]!);
  const end = start ? lines.indexOf('npm warn EBADENGINE }', i) : -1;
  if (start && end > i) {
    const block = lines.slice(i, end + 1);
    const required = block.join('\n').match(/required: \{ node: '([^']+)' \}/)?.[1];
    if (required && Bun.semver.satisfies(process.version, required)) {
      i = end;
      continue;
    }
  }
  out.push(lines[i]!);
}
if (out.length) console.log(out.join('\n'));
