//! Reading a call's outputs into answers: an output's digits split into
//! its fields' counts, and the fields another may have disturbed are asked
//! again.

use super::{Answer, Packer, Query, Stream};
use crate::error::{Error, Fault, Result};
use crate::reveal::oracle::Oracle;

impl Packer {
    /// Reads one output per planned input into answers; queries whose
    /// field may have been disturbed come back with `l: None` and are
    /// queued again.
    pub(in crate::reveal::packed) fn read(
        &mut self,
        outputs: &[f64],
        oracle: &Oracle,
    ) -> Result<Vec<Answer>> {
        let mut answers = Vec::with_capacity(self.queries.len());
        let planned = std::mem::take(&mut self.queries);
        for (k, &y) in outputs.iter().enumerate() {
            let queries = &planned[self.starts[k]..self.starts[k + 1]];
            let answer = |q: &Query, l| Answer {
                sub: q.stream,
                partner: q.partner,
                l,
            };
            if let [q] = queries {
                // Alone, a field may still sit at the scale it had beside others.
                let s = &self.streams[q.stream];
                let l = oracle
                    .validate(y / q.scale as f64, s.live(), s.pivot, q.partner)?
                    .ok_or_else(|| not_a_sum(y, s, q.partner))?;
                let l = s.decode(l);
                if l == s.full_live() && s.context.is_some() {
                    self.streams[q.stream].partial = true;
                }
                answers.push(answer(q, Some(l)));
                continue;
            }
            let Some(counts) = self.split(y, queries, oracle.masks().capacity(self.pairs[k]))
            else {
                // Not a sum of fields: each is asked again alone, where the
                // black box answers for itself.
                for q in queries {
                    self.streams[q.stream].solo = true;
                    self.ask(q.stream, q.partner);
                    answers.push(answer(q, None));
                }
                continue;
            };
            let levels: Vec<usize> = queries
                .iter()
                .zip(&counts)
                .map(|(q, &c)| {
                    let s = &self.streams[q.stream];
                    s.decode(s.live() - c as usize)
                })
                .collect();
            let swamped = self.swamped_early_groups(queries, &counts, &levels);
            // Fields at 0 with a context leaf may have met at their reach;
            // so may an early group's beside no field of its caller.
            let zeros: Vec<usize> = (0..queries.len())
                .filter(|&i| counts[i] == 0 && !swamped[i])
                .filter(|&i| {
                    let s = &self.streams[queries[i].stream];
                    s.context.is_some()
                        || (s.early().is_some() && self.caller_in(queries, i).is_none())
                })
                .collect();
            // Whether met there or swamped by another, they may reach
            // beyond their leaves: they share no more inputs with those.
            for &z in &zeros {
                let s = &mut self.streams[queries[z].stream];
                s.partial |= s.context.is_some();
            }
            for (i, q) in queries.iter().enumerate() {
                let doubted = swamped[i]
                    || zeros
                        .iter()
                        .any(|&z| z != i && self.reaches(queries[z].stream, q.stream));
                if doubted {
                    self.ask(q.stream, q.partner);
                    answers.push(answer(q, None));
                } else {
                    answers.push(answer(q, Some(levels[i])));
                }
            }
        }
        self.queries = planned;
        Ok(answers)
    }

    /// Where the caller of query `i`'s early group asks in the same input.
    fn caller_in(&self, queries: &[Query], i: usize) -> Option<usize> {
        let s = &self.streams[queries[i].stream];
        let caller = s.link.filter(|_| s.early().is_some())?.caller;
        field_of(queries, caller)
    }

    /// Which fields of one output an early group and its caller disturbed.
    ///
    /// The group `G` sits at level `L` of its caller `C`, `L'` below it.
    /// `C`'s pair meets above `L'` only at or above `L`, over all of `G`:
    /// `G`'s field is swamped, and so are those of the early groups inside
    /// `G`, however far down. At or below `L'` it leaves `G` alone, and
    /// `G`'s pair stays inside `G` unless it meets at `C`'s node at `L`, a
    /// fused node: that swamps everything under `L`, so `G` reads 0 (as it
    /// does at its own top) and `C` reads as if its pair met at `L`. Where
    /// fused nodes may be, that pair of readings doubts every field `G`
    /// reaches: `C`'s, and those of `C`'s other early groups below `L`.
    fn swamped_early_groups(
        &self,
        queries: &[Query],
        counts: &[u64],
        levels: &[usize],
    ) -> Vec<bool> {
        let mut swamped = vec![false; queries.len()];
        if queries
            .iter()
            .all(|q| self.streams[q.stream].early().is_none())
        {
            return swamped;
        }
        // Callers open before their groups: in stream order, a caller's
        // verdict is final before its groups read it.
        let mut order: Vec<usize> = (0..queries.len()).collect();
        order.sort_unstable_by_key(|&i| queries[i].stream);
        for &i in &order {
            // The nearest early caller up the chain that asks here.
            let mut s = queries[i].stream;
            while let (Some(lower), Some(link)) = (self.streams[s].early(), self.streams[s].link) {
                if let Some(c) = field_of(queries, link.caller) {
                    swamped[i] = swamped[c] || levels[c] > lower;
                    break;
                }
                s = link.caller;
            }
        }
        let mut doubted = swamped.clone();
        for i in 0..queries.len() {
            let Some(c) = self.caller_in(queries, i).filter(|_| self.may_fuse) else {
                continue;
            };
            let g = queries[i].stream;
            let level = self.streams[g].link.expect("an early group").level;
            let caller = &self.streams[queries[c].stream];
            if counts[i] == 0 && caller.live() - counts[c] as usize == caller.meeting_at(level) {
                for (j, q) in queries.iter().enumerate() {
                    doubted[j] |= j != i && self.reaches(g, q.stream);
                }
            }
        }
        doubted
    }

    /// The counts of the fields of one output, or `None` if it is not a
    /// valid packing of them (then each query is asked again on its own,
    /// where the black box alone answers for it).
    fn split(&self, y: f64, queries: &[Query], capacity: u64) -> Option<Vec<u64>> {
        let units = y / self.u;
        if !(units >= 0.0 && units < capacity as f64 && units.fract() == 0.0) {
            return None;
        }
        // Digits from the highest: each must count at most `live - 2`
        // units, and nothing may be left between or below the fields. That
        // keeps it below its radix too: a field keeps the radix it joined
        // with (or was compacted to) while its subproblem loses leaves to
        // early groups, so `live - 1` is at most the radix.
        let mut rest = units as u64;
        let mut counts = vec![0; queries.len()];
        for (k, q) in queries.iter().enumerate().rev() {
            let a = rest / q.scale;
            if a as usize + 2 > self.streams[q.stream].live() {
                return None;
            }
            rest -= a * q.scale;
            counts[k] = a;
        }
        (rest == 0).then_some(counts)
    }
}

/// Where stream `stream` asks among `queries`, one input's.
fn field_of(queries: &[Query], stream: usize) -> Option<usize> {
    queries.iter().position(|q| q.stream == stream)
}

fn not_a_sum(y: f64, s: &Stream, partner: usize) -> Error {
    Error::BlackBox(Fault::MoreThanUnmasked {
        y,
        pivot: s.pivot,
        partner,
        unmasked: s.live() - 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Format;
    use crate::reveal::masks::Masks;

    /// Subproblems of 5,001 and 3,001 live leaves count 0 to 4,999 and 0 to
    /// 2,999 units: 13 + 12 bits as bit fields, more than f32's 24, but
    /// 5,000 * 3,000 < 2^24 as digits, so they share every input.
    #[test]
    fn counts_share_an_input_as_digits_where_bit_fields_would_not_fit() {
        let n = 8_002;
        let masks = Masks::new(n, Format::F32, Format::F32, false, None).unwrap();
        let mut packer = Packer::new(n, &masks, false, true);
        packer.add(0, (1..5_001).collect(), None);
        packer.add(5_001, (5_002..n).collect(), None);
        assert!(packer.plan(&masks, 1));
        let q = packer.queries.clone();
        let radixes: Vec<u64> = packer.fields.iter().map(|f| f.radix).collect();
        assert_eq!(radixes, [5_000, 3_000]);
        let output =
            |digits: [u64; 2]| masks.u * (digits[0] * q[0].scale + digits[1] * q[1].scale) as f64;
        let capacity = masks.capacity(2);
        for digits in [[0, 0], [4_999, 2_999], [1_234, 17]] {
            assert_eq!(
                packer.split(output(digits), &q, capacity),
                Some(digits.to_vec())
            );
        }
        // A count beyond its subproblem, or a part of a unit: not a sum of
        // these fields.
        assert_eq!(packer.split(output([0, 3_000]), &q, capacity), None);
        assert_eq!(packer.split(output([1, 0]) * 1.5, &q, capacity), None);
    }
}
