//! The error of the YAML path: which stage failed, in which document, and where.

use std::fmt;

pub use crate::wit::types::YamlStage as Stage;
impl Stage {
    /// The stage's name as the vectors and the WIT spell it: `split`, `yaml`, `object`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Split => "split",
            Stage::Yaml => "yaml",
            Stage::Object => "object",
        }
    }
}

/// The stage's name ([`Stage::as_str`]).
impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub use crate::wit::types::YamlError;
impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "document {} (line {}, column {}): {} error: {}",
            self.document,
            self.line,
            self.column,
            self.stage.as_str(),
            self.message
        )
    }
}

impl std::error::Error for YamlError {}

/// A problem inside one document, before the document's index and first line are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located {
    pub stage: Stage,
    /// Line within the document, from 0.
    pub line: usize,
    /// Column, from 0.
    pub column: usize,
    pub message: String,
}

impl Located {
    pub(crate) fn yaml(at: Pos, message: impl Into<String>) -> Self {
        Located {
            stage: Stage::Yaml,
            line: at.line,
            column: at.column,
            message: message.into(),
        }
    }

    pub(crate) fn object(at: Pos, message: impl Into<String>) -> Self {
        Located {
            stage: Stage::Object,
            line: at.line,
            column: at.column,
            message: message.into(),
        }
    }
}

/// A position in a document: line and column from 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub line: usize,
    pub column: usize,
}
