/**
 * `--help` on every command: asksForHelp decides from the arguments alone (pure), and each
 * command's usage text names the command and every flag its parser reads (an oracle written
 * here: the flags each command's source passes to its parser or reads from `flags`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asksForHelp, isCommand, USAGES } from '../../../cli/usage.ts';

const ROOT = join(import.meta.dirname, '../../..');

describe('cli usage', () => {
  it('asks for help with --help or -h anywhere, but for mcp only before `--`', () => {
    expect(asksForHelp('quarantine', ['list', '--help'])).toBe(true);
    expect(asksForHelp('budgets', ['apply', 'f.json', '-h'])).toBe(true);
    expect(asksForHelp('top', ['--from', '2026-01-01'])).toBe(false);
    expect(asksForHelp('mcp', ['--agent-id', 'a', '--help'])).toBe(true);
    expect(asksForHelp('mcp', ['--', 'node', 'server.js', '--help'])).toBe(false);
    expect(asksForHelp('mcp', ['--help', '--', 'node', 'server.js'])).toBe(true);
    expect(isCommand('serve')).toBe(true);
    expect(isCommand('toString')).toBe(false);
    expect(isCommand(undefined)).toBe(false);
  });

  it('has a usage for every command main dispatches, naming it and every flag the command reads', () => {
    const main = readFileSync(join(ROOT, 'cli/main.ts'), 'utf8');
    const dispatched = [...main.matchAll(/case '([a-z][a-z-]*)':/g)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(Object.keys(USAGES).sort()).toEqual([...new Set(dispatched)].sort());
    for (const [command, text] of Object.entries(USAGES)) {
      expect(text, command).toMatch(new RegExp(`^usage: tool-audit ${command}\\b`));
      if (command === 'migrate') continue; // no module of its own, no flags (cli/main.ts)
      const src = readFileSync(join(ROOT, `cli/${command}.ts`), 'utf8').replace(/\/\*\*[\s\S]*?\*\//g, '');
      const read = new Set([...src.matchAll(/flags\.([a-z]+)/g), ...src.matchAll(/flags\['([a-z-]+)'\]/g)].map((m) => m[1] as string));
      for (const m of src.matchAll(/options: \{([^}]*(?:\{[^}]*\}[^}]*)*)\}/g)) for (const k of (m[1] as string).matchAll(/'?([a-z-]+)'?: (?:s|\{ type)/g)) read.add(k[1] as string);
      for (const flag of read) expect(text, `${command} --${flag}`).toContain(`--${flag}`);
    }
  });
});
