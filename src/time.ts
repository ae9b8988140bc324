// Every time value in responses is `yyyy-MM-dd HH:mm:ss` in Asia/Shanghai (spec section 9).
const formatter = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Asia/Shanghai',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** The last second formatted: Intl is slow, and events come by thousands within one second. */
let cached = { second: Number.NaN, text: '' };

export function formatTime(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second === cached.second) return cached.text;
  const p = Object.fromEntries(formatter.formatToParts(date).map((part) => [part.type, part.value]));
  const text = `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
  cached = { second, text };
  return text;
}
