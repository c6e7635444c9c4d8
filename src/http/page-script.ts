/**
 * The web page's script: src/http/ui/app.ts and its modules, bundled by Bun into one browser ES
 * module. From the source tree it is bundled on first use; scripts/build.ts bundles it once at build
 * time and writes it into page-script.generated.ts, which the executable serves.
 */
import { join } from 'node:path';
import { PREBUILT_PAGE_SCRIPT } from './page-script.generated';

const ENTRY = join(import.meta.dir, 'ui/app.ts');

/** Bundles the page's modules into one minified ES module (text). */
export async function bundlePageScript(): Promise<string> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: 'browser',
    format: 'esm',
    minify: true,
    throw: false,
  });
  const out = result.outputs[0];
  if (!result.success || !out) throw new Error(`the web page's script did not bundle: ${result.logs.join('; ')}`);
  return out.text();
}

/** The page's script: the one bundled at build time, else bundled now from the source. */
export const pageScript = async (): Promise<string> => PREBUILT_PAGE_SCRIPT ?? bundlePageScript();
