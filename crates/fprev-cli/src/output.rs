//! Trees out: the [`Output`] each `--format` of `reveal` and `render` names,
//! one file per format under `output/`, and how `--format` and `-o` choose
//! one and where it goes.

mod dot;
mod json;
mod svg;
mod text;

use std::path::Path;

use fprev::document::{TreeDocument, Written};
use fprev::error::Result;

use crate::args::{OutputArgs, OutputFormat};
use crate::write::{format_of, stdout_or, write_out};

/// A way to write a tree document down.
pub(crate) trait Output {
    /// The bytes of `doc` in this format, ready to write.
    fn render(&self, doc: &TreeDocument) -> Result<Vec<u8>>;
}

impl OutputFormat {
    /// The [`Output`] that writes this format; JSON keeps what `written`
    /// asks (the run's times, a predicted tree's leaves).
    pub(crate) fn output(self, written: Written) -> Box<dyn Output> {
        match self {
            OutputFormat::Text => Box::new(text::Text),
            OutputFormat::Json => Box::new(json::Json { written }),
            OutputFormat::Dot => Box::new(dot::Dot),
            OutputFormat::Svg => Box::new(svg::Svg),
        }
    }
}

impl OutputArgs {
    /// The file to write, `None` for stdout.
    pub(crate) fn path(&self) -> Option<&Path> {
        stdout_or(self.output.as_deref())
    }

    /// The format --format names, else the -o file's extension, else text;
    /// an extension naming another format than --format is an error.
    pub(crate) fn resolve(&self) -> Result<OutputFormat> {
        let formats = [
            ("json", OutputFormat::Json),
            ("dot", OutputFormat::Dot),
            ("gv", OutputFormat::Dot),
            ("svg", OutputFormat::Svg),
            ("txt", OutputFormat::Text),
        ];
        let format = format_of(self.format, self.path(), &formats, "fprev")?;
        Ok(format.unwrap_or(OutputFormat::Text))
    }

    /// Writes `doc` in `format` (from [`resolve`](Self::resolve), called
    /// before the work that makes `doc`) to the file or stdout.
    pub(crate) fn write(&self, doc: &TreeDocument, format: OutputFormat) -> Result<()> {
        let written = Written {
            timings: self.timings,
            leaves: self.leaves,
        };
        write_out(&format.output(written).render(doc)?, self.path())
    }

    /// Writes `doc` as --format and -o say.
    pub(crate) fn emit(&self, doc: &TreeDocument) -> Result<()> {
        self.write(doc, self.resolve()?)
    }
}
