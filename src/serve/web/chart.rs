//! Bar charts drawn on the server as inline SVG: no script, no style attribute (colours come
//! from the stylesheet's classes, so the strict Content-Security-Policy allows them and the
//! dark scheme applies), and every label written through [`Html::text`].

use super::html::Html;

/// The drawing's size in its own units (the stylesheet scales it to the page's width).
const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 220.0;
/// Room for the value labels on the left and the period labels below.
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 8.0;

/// One bar: its period's label, one value per series (stacked in series order), and the
/// text a pointer over it shows.
pub(crate) struct Bar {
    pub label: String,
    pub values: Vec<f64>,
    pub hover: String,
}

/// A series: its stylesheet class (`s0`…`s3`) and its name in the legend.
pub(crate) type Series = (&'static str, &'static str);

/// The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `max`: the top of
/// the value axis.
pub(crate) fn axis_top(max: f64) -> f64 {
    if max.is_nan() || max <= 0.0 || max.is_infinite() {
        return 1.0;
    }
    let power = 10f64.powf(max.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|top| *top >= max * (1.0 - 1e-12))
        .unwrap_or(10.0 * power)
}

/// Writes a stacked bar chart of `bars` (oldest first, one per period, periods without
/// usage given with zero values so that time runs evenly), its value axis labelled by
/// `unit`, and a legend when there is more than one series.
pub(crate) fn bars(
    h: &mut Html,
    name: &str,
    series: &[Series],
    bars: &[Bar],
    unit: &dyn Fn(f64) -> String,
) {
    let max = bars
        .iter()
        .map(|b| b.values.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let top = axis_top(max);
    let plot_w = WIDTH - LEFT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y_of = |v: f64| TOP + plot_h * (1.0 - v / top);
    h.raw("<svg class=\"chart\" viewBox=\"0 0 ")
        .num(WIDTH)
        .raw(" ")
        .num(HEIGHT)
        .raw("\" role=\"img\" aria-label=\"")
        .text(name)
        .raw("\"><g class=\"grid\">");
    for step in [0.0, 0.5, 1.0] {
        let v = top * step;
        let y = y_of(v);
        h.raw("<line x1=\"")
            .num(LEFT)
            .raw("\" x2=\"")
            .num(WIDTH)
            .raw("\" y1=\"")
            .num(format_args!("{y:.1}"))
            .raw("\" y2=\"")
            .num(format_args!("{y:.1}"))
            .raw("\"></line><text x=\"")
            .num(LEFT - 6.0)
            .raw("\" y=\"")
            .num(format_args!("{:.1}", y + 4.0))
            .raw("\" text-anchor=\"end\">")
            .text(&unit(v))
            .raw("</text>");
    }
    h.raw("</g><g class=\"bars\">");
    let slot = plot_w / bars.len().max(1) as f64;
    let width = (slot * 0.8).max(0.5);
    for (i, bar) in bars.iter().enumerate() {
        if bar.values.iter().all(|v| *v <= 0.0) {
            continue;
        }
        let x = LEFT + slot * i as f64 + (slot - width) / 2.0;
        h.raw("<g class=\"bar\"><title>")
            .text(&bar.hover)
            .raw("</title>");
        let mut base = 0.0;
        for (value, (class, _)) in bar.values.iter().zip(series) {
            if *value <= 0.0 {
                continue;
            }
            let (y0, y1) = (y_of(base), y_of(base + value));
            // A value too small to see still shows as a sliver.
            let height = (y0 - y1).max(0.5);
            h.raw("<rect class=\"")
                .raw(class)
                .raw("\" x=\"")
                .num(format_args!("{x:.2}"))
                .raw("\" y=\"")
                .num(format_args!("{:.2}", y0 - height))
                .raw("\" width=\"")
                .num(format_args!("{width:.2}"))
                .raw("\" height=\"")
                .num(format_args!("{height:.2}"))
                .raw("\"></rect>");
            base += value;
        }
        h.raw("</g>");
    }
    h.raw("</g><g class=\"periods\">");
    // The first, middle and last periods name the time axis.
    let mut marks: Vec<usize> = vec![0, bars.len() / 2, bars.len().saturating_sub(1)];
    marks.dedup();
    for (n, i) in marks.into_iter().enumerate() {
        let Some(bar) = bars.get(i) else { continue };
        let anchor = match (n, bars.len()) {
            (_, 1) => "middle",
            (0, _) => "start",
            (_, len) if i + 1 == len => "end",
            _ => "middle",
        };
        let x = match anchor {
            "start" => LEFT + slot * i as f64,
            "end" => LEFT + slot * (i + 1) as f64,
            _ => LEFT + slot * (i as f64 + 0.5),
        };
        h.raw("<text x=\"")
            .num(format_args!("{x:.1}"))
            .raw("\" y=\"")
            .num(HEIGHT - 4.0)
            .raw("\" text-anchor=\"")
            .raw(anchor)
            .raw("\">")
            .text(&bar.label)
            .raw("</text>");
    }
    h.raw("</g></svg>");
    if series.len() > 1 {
        h.raw("<p class=\"legend\">");
        for (class, label) in series {
            h.raw("<span><span class=\"swatch ")
                .raw(class)
                .raw("\"></span>")
                .raw(label)
                .raw("</span> ");
        }
        h.raw("</p>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_ends_at_a_round_value_above_the_highest_bar() {
        assert_eq!(axis_top(0.0), 1.0);
        assert_eq!(axis_top(0.8), 1.0);
        assert_eq!(axis_top(1.2), 2.0);
        assert_eq!(axis_top(2.2), 2.5);
        assert_eq!(axis_top(3.0), 5.0);
        assert_eq!(axis_top(7.0), 10.0);
        assert_eq!(axis_top(1000.0), 1000.0);
        assert_eq!(axis_top(1_234_567.0), 2_000_000.0);
        assert_eq!(axis_top(f64::NAN), 1.0);
    }

    #[test]
    fn labels_are_text_and_bars_are_stacked_in_series_order() {
        let mut h = Html::new();
        let bars_in = [
            Bar {
                label: "<b>day</b>".into(),
                values: vec![1.0, 3.0],
                hover: "<script>x</script>".into(),
            },
            Bar {
                label: "empty".into(),
                values: vec![0.0, 0.0],
                hover: "none".into(),
            },
        ];
        bars(
            &mut h,
            "A \"chart\"",
            &[("s0", "One"), ("s1", "Two")],
            &bars_in,
            &|v| format!("{v}"),
        );
        let svg = h.into_string();
        assert!(svg.contains("aria-label=\"A &quot;chart&quot;\""), "{svg}");
        assert!(svg.contains("&lt;b&gt;day&lt;/b&gt;") && !svg.contains("<b>"));
        assert!(svg.contains("<title>&lt;script&gt;x&lt;/script&gt;</title>"));
        // An empty period has no bar; the stacked bar reaches the axis top (5 for 4).
        assert_eq!(svg.matches("<g class=\"bar\">").count(), 1);
        let s0 = svg.find("class=\"s0\"").expect("first series");
        let s1 = svg.find("class=\"s1\"").expect("second series");
        assert!(s0 < s1);
        assert!(
            svg.contains(">5</text>") && svg.contains(">2.5</text>"),
            "{svg}"
        );
        assert!(!svg.contains("style="));
    }
}
