/** A small log-log line chart as SVG: latency against graph size, one line per series. */

export interface Series {
  readonly label: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
  readonly dashed?: boolean;
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function logLogChart(title: string, xLabel: string, yLabel: string, series: readonly Series[]): string {
  const W = 860;
  const H = 520;
  const left = 70;
  const right = 250;
  const top = 40;
  const bottom = 60;
  const all = series.flatMap((s) => s.points).filter((p) => p.x > 0 && p.y > 0);
  const lx = all.map((p) => Math.log10(p.x));
  const ly = all.map((p) => Math.log10(p.y));
  const x0 = Math.floor(Math.min(...lx));
  const x1 = Math.ceil(Math.max(...lx));
  const y0 = Math.floor(Math.min(...ly));
  const y1 = Math.ceil(Math.max(...ly));
  const px = (x: number) => left + ((Math.log10(x) - x0) / Math.max(x1 - x0, 1)) * (W - left - right);
  const py = (y: number) => H - bottom - ((Math.log10(y) - y0) / Math.max(y1 - y0, 1)) * (H - top - bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - right / 2}" y="22" text-anchor="middle" font-size="15">${escape(title)}</text>`,
  ];
  for (let e = x0; e <= x1; e++) {
    const x = px(10 ** e);
    parts.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${H - bottom}" stroke="#ddd"/>`);
    parts.push(`<text x="${x}" y="${H - bottom + 18}" text-anchor="middle">${format(10 ** e)}</text>`);
  }
  for (let e = y0; e <= y1; e++) {
    const y = py(10 ** e);
    parts.push(`<line x1="${left}" y1="${y}" x2="${W - right}" y2="${y}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 8}" y="${y + 4}" text-anchor="end">${format(10 ** e)}</text>`);
  }
  parts.push(`<text x="${(left + W - right) / 2}" y="${H - 15}" text-anchor="middle">${escape(xLabel)}</text>`);
  parts.push(`<text transform="translate(18 ${(top + H - bottom) / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length] ?? '#000';
    const pts = s.points.filter((p) => p.x > 0 && p.y > 0);
    if (pts.length === 0) return;
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''} points="${pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of pts) parts.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3.5" fill="${color}"/>`);
    const ly2 = top + 10 + i * 20;
    parts.push(
      `<line x1="${W - right + 20}" y1="${ly2}" x2="${W - right + 45}" y2="${ly2}" stroke="${color}" stroke-width="2"${s.dashed === true ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    parts.push(`<text x="${W - right + 52}" y="${ly2 + 4}">${escape(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function format(v: number): string {
  if (v >= 1e6) return `${v / 1e6}M`;
  if (v >= 1e3) return `${v / 1e3}k`;
  return String(Number(v.toPrecision(3)));
}

function escape(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}
