//! Minimal SVG charts (scatter plots and bar charts) for the command line's `--plots`: a
//! file any browser opens, without a plotting dependency. The Python package draws the same
//! data with matplotlib.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A short label for an axis value: at most three decimals, an SI suffix from 10^3.
fn tick_label(v: f64) -> String {
    let a = v.abs();
    let (x, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = format!("{x:.3}");
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    format!("{digits}{suffix}")
}

struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn new(xs: impl Iterator<Item = f64> + Clone, ys: impl Iterator<Item = f64> + Clone) -> Self {
        let lo = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::INFINITY, f64::min);
        let hi = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NEG_INFINITY, f64::max);
        let (mut x0, mut x1) = (lo(&mut xs.clone()), hi(&mut xs.clone()));
        let (mut y0, mut y1) = (lo(&mut ys.clone()), hi(&mut ys.clone()));
        if !x0.is_finite() {
            (x0, x1) = (0.0, 1.0);
        }
        if !y0.is_finite() {
            (y0, y1) = (0.0, 1.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        Frame { x0, x1, y0, y1 }
    }
    fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }
    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)
    }
}

/// The opening of a chart: the `<svg>` element (text of `font_size` px), a white background
/// and the title.
fn header(out: &mut String, title: &str, font_size: u32) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="{font_size}">"#
    );
    let _ = write!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = write!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        W / 2.0,
        escape(title)
    );
}

fn axes(out: &mut String, f: &Frame, title: &str, x_label: &str, y_label: &str, log_y: bool) {
    header(out, title, 12);
    let (px0, px1, py0, py1) = (LEFT, W - RIGHT, TOP, H - BOTTOM);
    let _ = write!(
        out,
        r#"<rect x="{px0}" y="{py0}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        px1 - px0,
        py1 - py0
    );
    for i in 0..=4 {
        let t = f64::from(i) / 4.0;
        let xv = f.x0 + t * (f.x1 - f.x0);
        let yv = f.y0 + t * (f.y1 - f.y0);
        let (x, y) = (f.x(xv), f.y(yv));
        let ylabel = if log_y { tick_label(2f64.powf(yv)) } else { tick_label(yv) };
        let _ = write!(
            out,
            r#"<line x1="{x}" y1="{py1}" x2="{x}" y2="{}" stroke="black"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
            py1 + 5.0,
            py1 + 18.0,
            tick_label(xv)
        );
        let _ = write!(
            out,
            r#"<line x1="{}" y1="{y}" x2="{px0}" y2="{y}" stroke="black"/><text x="{}" y="{}" text-anchor="end">{}</text>"#,
            px0 - 5.0,
            px0 - 8.0,
            y + 4.0,
            ylabel
        );
    }
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (px0 + px1) / 2.0,
        H - 15.0,
        escape(x_label)
    );
    let _ = write!(
        out,
        r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (py0 + py1) / 2.0,
        escape(y_label)
    );
}

/// A scatter plot of `points` (x, y); with `log_y`, y is drawn on a log2 scale (points with
/// y ≤ 0 are drawn at the bottom).
pub fn scatter(
    points: &[(f64, f64)],
    title: &str,
    x_label: &str,
    y_label: &str,
    log_y: bool,
) -> String {
    let ty = |y: f64| if log_y { y.max(1.0).log2() } else { y };
    let f = Frame::new(points.iter().map(|p| p.0), points.iter().map(|p| ty(p.1)));
    let mut out = String::new();
    axes(&mut out, &f, title, x_label, y_label, log_y);
    for &(x, y) in points {
        let _ = write!(
            out,
            r##"<circle cx="{:.1}" cy="{:.1}" r="1.5" fill="#1f77b4" fill-opacity="0.6"/>"##,
            f.x(x),
            f.y(ty(y))
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A bar chart of `bars` (label, count), in order.
pub fn bars(bars: &[(String, u64)], title: &str, x_label: &str, y_label: &str) -> String {
    let n = bars.len().max(1) as f64;
    let top = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1) as f64;
    let f = Frame { x0: 0.0, x1: n, y0: 0.0, y1: top };
    let mut out = String::new();
    header(&mut out, title, 11);
    let slot = (W - LEFT - RIGHT) / n;
    for (i, (label, count)) in bars.iter().enumerate() {
        let x = f.x(i as f64);
        let y = f.y(*count as f64);
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="#1f77b4"/>"##,
            x + slot * 0.1,
            slot * 0.8,
            (H - BOTTOM - y).max(0.0)
        );
        let _ = write!(
            out,
            r#"<text transform="translate({:.1},{}) rotate(45)" font-size="9">{}</text>"#,
            x + slot * 0.3,
            H - BOTTOM + 10.0,
            escape(label)
        );
    }
    let _ = write!(
        out,
        r#"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="black"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="black"/>"#,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        H - BOTTOM
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="end">{}</text><text x="{}" y="{}" text-anchor="end">0</text>"#,
        LEFT - 6.0,
        TOP + 4.0,
        tick_label(top),
        LEFT - 6.0,
        H - BOTTOM + 4.0
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 5.0,
        escape(x_label),
        (TOP + H - BOTTOM) / 2.0,
        escape(y_label)
    );
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(1500.0), "1.5k");
        assert_eq!(tick_label(2_000_000.0), "2M");
        assert_eq!(tick_label(0.25), "0.25");
    }

    #[test]
    fn charts_are_well_formed() {
        let s = scatter(&[(0.0, 1.0), (10.0, 1024.0)], "t <1>", "x", "y", true);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>\n"));
        assert_eq!(s.matches("<circle").count(), 2);
        assert!(s.contains("t &lt;1&gt;"));
        let b = bars(&[("a".into(), 3), ("b".into(), 0)], "h", "x", "y");
        assert_eq!(b.matches("<rect").count(), 3); // background + 2 bars
                                                   // Empty input still draws axes.
        assert!(scatter(&[], "e", "x", "y", false).contains("</svg>"));
    }
}
