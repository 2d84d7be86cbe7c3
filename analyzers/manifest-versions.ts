/**
 * The versions of the tool manifest and which one judges a call: the latest version in force at
 * the call's created_at, and the first version for every call before it (a team loads its
 * manifest today and audits last month). Pure.
 */
import type { Manifest, ManifestEntry } from '../schemas/tool-manifest.ts';

/** One applied version of the whole manifest. */
export interface ManifestVersion {
  version: number;
  /** Epoch ms at which it took effect. */
  effectiveMs: number;
  manifest: Manifest;
  warnings: string[];
  /** Who applied it (API key id, `local`; '' before migration 025). */
  appliedBy: string;
}

/** Every version, oldest first, with the look-up by time. */
export class ManifestHistory {
  readonly versions: readonly ManifestVersion[];

  constructor(versions: readonly ManifestVersion[]) {
    this.versions = [...versions].sort((a, b) => a.version - b.version);
  }

  /** Whether any manifest was ever applied (M1 applies only then). */
  get loaded(): boolean {
    return this.versions.length > 0;
  }

  /** The newest version, or undefined before the first apply. */
  get current(): ManifestVersion | undefined {
    return this.versions[this.versions.length - 1];
  }

  /** The version judging a call created at `t` (epoch ms). */
  at(t: number): ManifestVersion | undefined {
    const v = this.versions;
    let lo = 0;
    let hi = v.length - 1;
    let found = 0; // before the first version: the first one reaches back
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((v[mid] as ManifestVersion).effectiveMs <= t) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return v[found];
  }

  /** The entry of `toolId` in the version judging a call created at `t`. */
  entryAt(toolId: string, t: number): ManifestEntry | undefined {
    return this.at(t)?.manifest[toolId];
  }

  /** Tools that some version gives a property (e.g. a rate limit, an input schema). */
  toolsWhere(pred: (e: ManifestEntry) => boolean): string[] {
    const out = new Set<string>();
    for (const v of this.versions) for (const e of Object.values(v.manifest)) if (pred(e)) out.add(e.tool_id);
    return [...out].sort();
  }
}
