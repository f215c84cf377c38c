/**
 * serve is the default command, so commander hands it a mistyped command as an argument ("too many
 * arguments for 'serve'"): this names the word and the nearest command instead (issue 25).
 */
import type { Command } from 'commander';

/** Edit distance (insert, delete, substitute, swap neighbours), for "did you mean". */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((d[i - 1]?.[j] ?? 0) + 1, (d[i]?.[j - 1] ?? 0) + 1, (d[i - 1]?.[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (d[i - 2]?.[j - 2] ?? 0) + 1);
      (d[i] as number[])[j] = best;
    }
  return d[a.length]?.[b.length] ?? 0;
}

/** Refuses a word that reached the default command as its argument, suggesting the nearest command. */
export function refuseUnknownCommands(program: Command): void {
  program.hook('preSubcommand', (root, sub) => {
    const [word] = root.args;
    if (sub.name() !== 'serve' || word === undefined || word === 'serve') return;
    const names = root.commands.map((c) => c.name());
    const near = names
      .map((n) => ({ n, d: editDistance(word.toLowerCase(), n) }))
      .filter((x) => x.d <= Math.max(1, Math.floor(x.n.length / 3)))
      .sort((x, y) => x.d - y.d)[0];
    root.error(
      `limbic: unknown command '${word}'.${near === undefined ? '' : ` Did you mean '${near.n}'?`} Commands: ${names.join(', ')} (limbic --help).`,
      { code: 'limbic.unknownCommand', exitCode: 2 },
    );
  });
}
