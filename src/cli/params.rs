//! `iosim params`: every parameter of the bundled and given models, with
//! its value, unit and source (`file:line`), the free ones as the fit in
//! use sets them.

use iosim::report::Report;

use super::Common;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
}

/// `iosim params`.
pub fn execute(a: Args) -> iosim::Result<String> {
    let (mut reg, parameters) = a.common.registry()?;
    let rep = Report {
        command: "params".into(),
        seed: a.common.seed,
        meta: vec![("parameters".into(), parameters)],
        warnings: None,
        sections: vec![iosim::sections::params_section(&mut reg)],
    };
    Ok(rep.render(a.common.out_format()))
}
