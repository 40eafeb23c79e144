//! Plain-text tables with aligned columns (numbers right-aligned).

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Self { header: header.iter().map(|s| (*s).to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let width: Vec<usize> = (0..n)
            .map(|i| {
                self.rows
                    .iter()
                    .map(|r| r[i].chars().count())
                    .chain(std::iter::once(self.header[i].chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let numeric = |s: &str| s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                let pad = width[i] - c.chars().count();
                if i > 0 {
                    s += "  ";
                }
                if i > 0 && numeric(c) {
                    s += &" ".repeat(pad);
                    s += c;
                } else {
                    s += c;
                    if i + 1 < n {
                        s += &" ".repeat(pad);
                    }
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.header);
        out += &(width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  ") + "\n");
        for r in &self.rows {
            out += &line(r);
        }
        out
    }
}
