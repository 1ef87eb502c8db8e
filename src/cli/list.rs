//! `iosim list KIND`: every model of a kind (servers, adapters, test beds,
//! links, buses, CPUs) with a one-line description, its calibration status
//! (how many values are fitted to the papers' figures, how many assumed)
//! and the file it comes from.

use std::path::PathBuf;

use iosim::report::{Cell, Report, Section};
use iosim::show::{catalogue, MODEL_KINDS};

use super::FormatArg;

#[derive(clap::Args)]
pub struct Args {
    /// What to list.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(MODEL_KINDS.map(|k| k.0)))]
    pub kind: String,
    /// Extra directory of model files; repeatable.
    #[arg(long = "models", value_name = "DIR")]
    pub models: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// With the table format: each row on one line however wide.
    #[arg(long)]
    pub wide: bool,
}

/// `iosim list`.
pub fn execute(a: Args) -> iosim::Result<String> {
    // The model files as written: the status counts what they call fitted.
    let (reg, _) = super::registry(&a.models, None, true)?;
    let (word, kind) = MODEL_KINDS
        .into_iter()
        .find(|k| k.0 == a.kind)
        .ok_or_else(|| iosim::Error::Usage(format!("unknown kind `{}`", a.kind)))?;
    let mut s = Section::new(word, &["name", "description", "calibration", "source"]);
    for e in catalogue(&reg, kind) {
        s.rows.push(vec![
            Cell::Text(e.name),
            Cell::Text(e.summary),
            Cell::Text(e.status),
            Cell::Text(e.file),
        ]);
    }
    let rep = Report {
        command: format!("list {word}"),
        meta: vec![(
            "calibration".into(),
            "values whose source says fitted are fitted to the bundled papers' figures (models/fitted.toml; iosim validate compares them); assumed values were chosen without a source; the rest come from specifications and documents (iosim params lists every value with its source)".into(),
        )],
        sections: vec![s],
        ..Default::default()
    };
    let format = match (a.format, a.wide) {
        (FormatArg::Table, true) => iosim::report::Format::Wide,
        (f, _) => f.into(),
    };
    Ok(rep.render(format))
}
