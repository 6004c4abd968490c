//! Which shard a hunt runs: `--shard I/N`, or on a batch system that numbers its tasks, the
//! index from [`INDEX_VAR`] (a Kubernetes Indexed Job sets it) with the count from
//! `--shards N` or [`COUNT_VAR`].

use splitbrain::sweep::Shard;

use crate::cli::Failure;

/// The environment variable holding this task's index: Kubernetes sets it in every pod of an
/// Indexed Job; any other batch system can set it the same way.
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

/// The environment variable holding the number of shards when `--shards` is not given.
pub const COUNT_VAR: &str = "SPLITBRAIN_SHARDS";

/// The shard to run: `shard` if given, else index from [`INDEX_VAR`] of count `shards` (or
/// [`COUNT_VAR`]); `None` runs every seed. `env` looks up an environment variable. One of
/// index and count without the other is an error.
pub fn resolve(
    shard: Option<Shard>,
    shards: Option<u64>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Shard>, Failure> {
    if shard.is_some() {
        return Ok(shard);
    }
    let count = match shards {
        Some(count) => Some(count),
        None => env(COUNT_VAR)
            .map(|text| parse(COUNT_VAR, &text, "a shard count of at least 1"))
            .transpose()?,
    };
    let index = env(INDEX_VAR)
        .map(|text| parse(INDEX_VAR, &text, "a shard index (0, 1, ...)"))
        .transpose()?;
    if count == Some(0) {
        return Err(Failure(format!(
            "--shards / {COUNT_VAR}: expected a shard count of at least 1, found 0"
        )));
    }
    match (index, count) {
        (None, None) => Ok(None),
        (Some(index), None) => Err(Failure(format!(
            "{INDEX_VAR}={index} is set: expected the shard count from --shards N or \
             {COUNT_VAR}, found none"
        ))),
        (None, Some(count)) => Err(Failure(format!(
            "{count} shards asked for: expected this shard's index in {INDEX_VAR} (or \
             --shard I/{count}), found none"
        ))),
        (Some(index), Some(count)) if index >= count => Err(Failure(format!(
            "{INDEX_VAR}: expected a shard index below the {count} shards, found {index}"
        ))),
        (Some(index), Some(count)) => Ok(Some(Shard { index, count })),
    }
}

fn parse(name: &str, text: &str, expected: &str) -> Result<u64, Failure> {
    text.trim()
        .parse()
        .map_err(|_| Failure(format!("{name}: expected {expected}, found {text:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn shard(index: u64, count: u64) -> Option<Shard> {
        Some(Shard { index, count })
    }

    #[test]
    fn the_index_comes_from_the_batch_system_and_the_count_from_the_command_line() {
        let indexed = [(INDEX_VAR, "2")];
        assert_eq!(resolve(None, Some(4), env(&indexed)).unwrap(), shard(2, 4));
        let both = [(INDEX_VAR, "3"), (COUNT_VAR, "5")];
        assert_eq!(resolve(None, None, env(&both)).unwrap(), shard(3, 5));
        assert_eq!(resolve(None, Some(8), env(&both)).unwrap(), shard(3, 8));
        assert_eq!(resolve(shard(1, 2), None, env(&both)).unwrap(), shard(1, 2));
        assert_eq!(resolve(None, None, env(&[])).unwrap(), None);
    }

    #[test]
    fn one_without_the_other_is_a_one_line_error() {
        type Vars<'a> = &'a [(&'a str, &'a str)];
        let cases: [(Option<u64>, Vars, &str); 6] = [
            (
                Some(0),
                &[],
                "--shards / SPLITBRAIN_SHARDS: expected a shard count of at least 1, found 0",
            ),
            (
                None,
                &[(INDEX_VAR, "2")],
                "JOB_COMPLETION_INDEX=2 is set: expected the shard count from --shards N or SPLITBRAIN_SHARDS",
            ),
            (
                Some(4),
                &[],
                "4 shards asked for: expected this shard's index in JOB_COMPLETION_INDEX",
            ),
            (None, &[(COUNT_VAR, "4")], "4 shards asked for"),
            (
                Some(4),
                &[(INDEX_VAR, "4")],
                "JOB_COMPLETION_INDEX: expected a shard index below the 4 shards, found 4",
            ),
            (
                None,
                &[(INDEX_VAR, "two"), (COUNT_VAR, "4")],
                "JOB_COMPLETION_INDEX: expected a shard index (0, 1, ...), found \"two\"",
            ),
        ];
        for (shards, vars, wanted) in cases {
            let Failure(message) = resolve(None, shards, env(vars)).unwrap_err();
            assert!(message.contains(wanted), "{message}");
            assert_eq!(message.lines().count(), 1);
        }
    }
}
