//! What compiling a user's regex costs before it is matched: the case folding of its
//! classes, bounded from the pattern's syntax before the `regex` crate compiles it.
//!
//! The `regex` crate bounds a compiled program's size and matches in linear time, but the
//! work of compiling is not bounded by either. Under case-insensitivity (an emitter
//! filter's rules, or `(?i)` in a hook or stream pattern) `regex-syntax` folds each
//! bracketed class by visiting every codepoint of every range in it that overlaps the case
//! folding table, about 6 ns a codepoint here (36 ns for one that has a mapping, which is
//! pushed and sorted in). `[\S]` or `[a-\x{10FFFF}]` is a whole Unicode fold (~7 ms);
//! 1,024 of them in a 4 KiB pattern were 7.6 s of one thread (docs/reliability.md, finding
//! 2). So a rule list's patterns are costed here, where nothing is folded, and refused past
//! [`MAX_CASE_FOLD_CODEPOINTS`].
//!
//! The count follows `regex-syntax`'s translator (0.8): a bracketed class folds the union
//! of its items before negating it, a nested bracketed class is folded at its own level
//! and again in its parent's union, the operands of `&&`, `--` and `~~` are folded before
//! the operation, and a `\p{…}` class is folded where it is written. Perl classes
//! (`\w`, `\S`, …) are closed under folding and never folded alone, but count in a
//! bracket's union. Every count is an upper bound: a set's size where the fold visits only
//! the ranges that overlap the table.

use crate::error::Error;
use regex_syntax::ast::{self, Ast, ClassSetBinaryOpKind, ClassSetItem, Flag, FlagsItemKind};
use regex_syntax::hir::{Class, HirKind};
use tap_protocol::limits::MAX_CASE_FOLD_CODEPOINTS;
use tap_protocol::ErrorCode;

/// Codepoints in Unicode: the largest a class can be.
const ALL: u64 = 0x11_0000;

/// Bounds the codepoints with a case mapping: the simple case folding table has 2,938
/// entries (Unicode 16).
const FOLD_TABLE_ENTRIES: u64 = 3 * 1024;

/// Most codepoints a fold adds for one codepoint: an entry maps to at most three others.
const MAPPINGS_PER_ENTRY: u64 = 3;

/// What a codepoint with a mapping costs to fold beyond one without, in the same unit: its
/// mapping is pushed as a range and sorted in. Measured in release: `\p{Lu}` (all mapped)
/// about 36 ns a codepoint, `[\S]` (mostly unmapped) about 6 ns.
const MAPPED_WEIGHT: u64 = 6;

/// How many codepoints compiling `pattern` case-folds (an upper bound; one with a case
/// mapping counts `1 + MAPPED_WEIGHT`, for what it costs), with
/// case-insensitivity on from the start when `case_insensitive`; counting stops past
/// `budget` (the answer is then `budget + 1`). A pattern that does not parse costs 0:
/// compiling it fails with the `regex` crate's own message.
pub(crate) fn case_fold_codepoints(pattern: &str, case_insensitive: bool, budget: u64) -> u64 {
    let Ok(parsed) = ast::parse::Parser::new().parse(pattern) else {
        return 0;
    };
    let counter = Counter {
        pattern,
        flags: vec![Flags {
            case_insensitive,
            unicode: true,
        }],
        classes: Vec::new(),
        folded: 0,
        budget,
    };
    ast::visit(&parsed, counter).unwrap_or(budget.saturating_add(1))
}

/// Refuses a rule list whose `patterns` (each with its rule's index) together case-fold more
/// than [`MAX_CASE_FOLD_CODEPOINTS`]; `what` names the list in the error ("the eventFilter's
/// patterns"). The index is the rule's, so a list where some rules have no pattern still
/// names the right one.
pub(crate) fn check_list<'a>(
    what: &str,
    patterns: impl IntoIterator<Item = (usize, &'a str)>,
    case_insensitive: bool,
) -> Result<(), Error> {
    let mut left = MAX_CASE_FOLD_CODEPOINTS;
    for (i, p) in patterns {
        let cost = case_fold_codepoints(p, case_insensitive, left);
        left = left.checked_sub(cost).ok_or_else(|| {
            Error::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "{what} would case-fold more than {MAX_CASE_FOLD_CODEPOINTS} codepoints to \
                 compile (counting up to rule {i}). A case-insensitive bracketed \
                 class holding most of Unicode (such as [\\S], [\\s\\S] or [a[^b]]) folds \
                 all of it: use '\\S', '(?s:.)' or '.' outside brackets, or '(?-i)' around \
                 the class"
                ),
            )
        })?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
struct Flags {
    case_insensitive: bool,
    unicode: bool,
}

struct Counter<'p> {
    pattern: &'p str,
    /// The flags in force; a group pushes its own, `(?flags)` changes the top.
    flags: Vec<Flags>,
    /// Sizes of the classes being built, innermost last (as the translator's frames).
    classes: Vec<u64>,
    folded: u64,
    /// Counting stops (the visit fails) past this.
    budget: u64,
}

impl Counter<'_> {
    fn now(&self) -> Flags {
        self.flags.last().copied().unwrap_or(Flags {
            case_insensitive: false,
            unicode: true,
        })
    }

    /// Counts a fold of a set of `size` codepoints, if folding is on; the set's size after.
    fn fold(&mut self, size: u64) -> Result<u64, ()> {
        let now = self.now();
        if !(now.case_insensitive && now.unicode) {
            return Ok(size);
        }
        let work = size + MAPPED_WEIGHT * size.min(FOLD_TABLE_ENTRIES);
        self.folded = self.folded.saturating_add(work);
        if self.folded > self.budget {
            return Err(());
        }
        Ok((size + MAPPINGS_PER_ENTRY * size.min(FOLD_TABLE_ENTRIES)).min(ALL))
    }

    fn add_to_class(&mut self, size: u64) {
        if let Some(top) = self.classes.last_mut() {
            *top = (*top + size).min(ALL);
        }
    }

    /// The size of a Perl or Unicode class as written (negated or not), from its own text.
    fn size_of(&self, span: &ast::Span) -> u64 {
        let text = &self.pattern[span.start.offset..span.end.offset];
        match regex_syntax::Parser::new()
            .parse(text)
            .map(|h| h.into_kind())
        {
            Ok(HirKind::Literal(_)) => 1,
            Ok(HirKind::Class(Class::Unicode(c))) => c
                .ranges()
                .iter()
                .map(|r| u64::from(r.end()) - u64::from(r.start()) + 1)
                .sum(),
            _ => ALL,
        }
    }

    /// A `\p{…}` class folds its set before negating it.
    fn unicode_class(&mut self, x: &ast::ClassUnicode) -> Result<u64, ()> {
        let written = self.size_of(&x.span);
        let unnegated = if x.is_negated() {
            ALL - written.min(ALL)
        } else {
            written
        };
        self.fold(unnegated)?;
        Ok(written)
    }

    fn set_flags(&mut self, flags: &ast::Flags) {
        let mut now = self.now();
        let mut negated = false;
        for item in &flags.items {
            match item.kind {
                FlagsItemKind::Negation => negated = true,
                FlagsItemKind::Flag(Flag::CaseInsensitive) => now.case_insensitive = !negated,
                FlagsItemKind::Flag(Flag::Unicode) => now.unicode = !negated,
                FlagsItemKind::Flag(_) => {}
            }
        }
        if let Some(top) = self.flags.last_mut() {
            *top = now;
        }
    }
}

impl ast::Visitor for Counter<'_> {
    type Output = u64;
    type Err = ();

    fn finish(self) -> Result<u64, ()> {
        Ok(self.folded)
    }

    fn visit_pre(&mut self, ast: &Ast) -> Result<(), ()> {
        match ast {
            Ast::Group(g) => {
                self.flags.push(self.now());
                if let Some(flags) = g.flags() {
                    self.set_flags(flags);
                }
            }
            Ast::ClassBracketed(_) => self.classes.push(0),
            _ => {}
        }
        Ok(())
    }

    fn visit_post(&mut self, ast: &Ast) -> Result<(), ()> {
        match ast {
            Ast::Group(_) => {
                self.flags.pop();
            }
            Ast::Flags(f) => self.set_flags(&f.flags),
            Ast::ClassUnicode(x) => {
                self.unicode_class(x)?;
            }
            Ast::ClassBracketed(_) => {
                let size = self.classes.pop().unwrap_or(0);
                self.fold(size)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), ()> {
        if let ClassSetItem::Bracketed(_) = item {
            self.classes.push(0);
        }
        Ok(())
    }

    fn visit_class_set_item_post(&mut self, item: &ClassSetItem) -> Result<(), ()> {
        let size = match item {
            ClassSetItem::Empty(_) | ClassSetItem::Union(_) => 0,
            ClassSetItem::Literal(_) => 1,
            ClassSetItem::Range(r) => u64::from(r.end.c) - u64::from(r.start.c) + 1,
            ClassSetItem::Ascii(_) => 128,
            ClassSetItem::Perl(p) => self.size_of(&p.span),
            ClassSetItem::Unicode(u) => self.unicode_class(u)?,
            ClassSetItem::Bracketed(b) => {
                let inner = self.classes.pop().unwrap_or(0);
                let folded = self.fold(inner)?;
                if b.negated {
                    ALL
                } else {
                    folded
                }
            }
        };
        self.add_to_class(size);
        Ok(())
    }

    fn visit_class_set_binary_op_pre(&mut self, _: &ast::ClassSetBinaryOp) -> Result<(), ()> {
        self.classes.push(0);
        Ok(())
    }

    fn visit_class_set_binary_op_in(&mut self, _: &ast::ClassSetBinaryOp) -> Result<(), ()> {
        self.classes.push(0);
        Ok(())
    }

    fn visit_class_set_binary_op_post(&mut self, op: &ast::ClassSetBinaryOp) -> Result<(), ()> {
        let rhs = self.classes.pop().unwrap_or(0);
        let lhs = self.classes.pop().unwrap_or(0);
        let (rhs, lhs) = (self.fold(rhs)?, self.fold(lhs)?);
        let size = match op.kind {
            ClassSetBinaryOpKind::Intersection => lhs.min(rhs),
            ClassSetBinaryOpKind::Difference => lhs,
            ClassSetBinaryOpKind::SymmetricDifference => (lhs + rhs).min(ALL),
        };
        self.add_to_class(size);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(p: &str) -> u64 {
        case_fold_codepoints(p, true, u64::MAX)
    }

    fn cs(p: &str) -> u64 {
        case_fold_codepoints(p, false, u64::MAX)
    }

    /// The count of one fold of a set of `n` codepoints.
    fn fold(n: u64) -> u64 {
        n + MAPPED_WEIGHT * n.min(FOLD_TABLE_ENTRIES)
    }

    #[test]
    fn a_bracketed_class_costs_what_its_union_holds_before_negation() {
        assert_eq!(
            ci("abc"),
            0,
            "literals fold one codepoint each: not counted"
        );
        assert_eq!(ci("[a-z]"), fold(26));
        assert_eq!(ci("[^a-z]"), fold(26), "folded before it is negated");
        assert!(ci(r"[^\s]") < fold(100));
        assert!(ci(r"[\S]") > 1_100_000, "a union of most of Unicode");
        assert!(ci(r"[\s\S]") > 1_100_000);
        assert!(ci(r"[a-\x{10FFFF}]") > 1_100_000, "a range is its width");
        assert!(ci(r"[\w-]") > 100_000 && ci(r"[\w-]") < 200_000);
    }

    #[test]
    fn nested_classes_and_set_operations_are_folded_at_each_level() {
        // The negated inner class is folded small, but its parent folds its complement.
        assert!(ci("[a[^b]]") > 1_100_000);
        assert_eq!(
            ci("[[a-z]]"),
            fold(26) + fold(26 * (1 + MAPPINGS_PER_ENTRY))
        );
        assert!(
            ci(r"[\S&&a]") > 1_100_000,
            "operands are folded before the operation"
        );
        // Each operand folded, then the bracket folds what the operation left (at most
        // what a folded `a` can hold).
        assert_eq!(ci(r"[a&&b]"), 2 * fold(1) + fold(1 + MAPPINGS_PER_ENTRY));
    }

    #[test]
    fn perl_classes_alone_are_free_and_unicode_classes_fold_where_written() {
        assert_eq!(ci(r"\S\W\D\w\s\d."), 0);
        assert_eq!(ci(r"(?s:.)"), 0);
        let letters = ci(r"\pL");
        assert!(letters > 100_000 && letters < 400_000, "{letters}");
        assert_eq!(ci(r"\PL"), letters, "folded before it is negated");
        assert!(ci(r"\p{Greek}") < fold(1_000));
    }

    #[test]
    fn only_case_insensitive_unicode_classes_count() {
        assert_eq!(cs(r"[\S]"), 0);
        assert!(
            cs(r"(?i)[\S]") > 1_100_000,
            "an inline flag turns folding on"
        );
        assert_eq!(cs(r"(?i:x)[\S]"), 0, "a group's flags end with it");
        assert!(cs(r"((?i)x)|y[\S]") == 0);
        assert!(
            cs(r"x(?i)y|[\S]") > 1_100_000,
            "flags hold to the group's end"
        );
        assert_eq!(ci(r"(?-i)[\S]"), 0);
        assert_eq!(ci(r"(?-u)[\S]"), 0, "byte classes fold ASCII only");
        assert_eq!(
            ci(r"[\S"),
            0,
            "does not parse: the compiler's error is the answer"
        );
    }

    #[test]
    fn counting_stops_past_the_budget() {
        let four_k = r"[\S]".repeat(1024);
        assert_eq!(case_fold_codepoints(&four_k, true, 5), 6);
        assert_eq!(case_fold_codepoints(&four_k, false, 5), 0);
    }

    #[test]
    fn a_list_is_refused_past_the_bound_naming_where_it_ran_out() {
        let common = [
            r"error|warn(ing)?",
            r"[\w.+-]+@[\w-]+\.[\w.]+",
            r"^\s*at [\w$.]+\(",
            r"\p{Greek}+",
            r"[^\s]+ failed",
            r"[\s\S]*",
        ];
        check_list("the rules", common.iter().copied().enumerate(), true).unwrap();
        let whole = r"[\s\S]";
        let fit = (MAX_CASE_FOLD_CODEPOINTS / ci(whole)) as usize;
        check_list("the rules", vec![whole; fit].into_iter().enumerate(), true).unwrap();
        let e = check_list(
            "the rules",
            vec![whole; fit + 1].into_iter().enumerate(),
            true,
        )
        .unwrap_err();
        assert!(
            e.message.starts_with(&format!(
                "the rules would case-fold more than {MAX_CASE_FOLD_CODEPOINTS} codepoints to compile (counting up to rule {fit})"
            )),
            "{e}"
        );
        check_list(
            "the rules",
            vec![whole; fit + 1].into_iter().enumerate(),
            false,
        )
        .unwrap();
    }
}
