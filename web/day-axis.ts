/**
 * The x axis of a daily chart: one tick per day of the data, labelled with the day ("Fri 20"),
 * never hours (uPlot's time axis picks hour ticks for a week of points). The dates are calendar
 * days; noon UTC stands for each, so no time zone moves a label to the next day.
 */
const dayLabel = new Intl.DateTimeFormat(undefined, { weekday: "short", day: "numeric", timeZone: "UTC" });

/** Seconds (uPlot's time unit) of the noon that stands for each `YYYY-MM-DD` date. */
export const dayPoints = (dates: readonly string[]) => dates.map((d) => Date.parse(d + "T12:00:00Z") / 1000);

export const dayText = (seconds: number) => dayLabel.format(new Date(seconds * 1000));

/** uPlot axis options: ticks exactly on the days, labelled as days. */
export function dayAxis(xs: readonly number[]) {
  return { splits: () => [...xs], values: (_u: unknown, splits: number[]) => splits.map(dayText) };
}
