//! The saved form of a compact container: a plain list of its items, written from an iterator
//! and read back one item at a time (no list of the wide items on the way in or out).

use std::marker::PhantomData;

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Write `items` (`len` of them) as a list.
pub(crate) fn serialize<S: Serializer, T: Serialize>(
    s: S,
    len: usize,
    items: impl Iterator<Item = T>,
) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(len))?;
    for item in items {
        seq.serialize_element(&item)?;
    }
    seq.end()
}

/// Read a list of `T` into a `C`, each item through `push`; `expecting` names it in errors.
pub(crate) fn deserialize<'de, D, T, C>(
    d: D,
    expecting: &'static str,
    push: fn(&mut C, T),
) -> Result<C, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
    C: Default,
{
    struct Items<T, C> {
        expecting: &'static str,
        push: fn(&mut C, T),
        item: PhantomData<T>,
    }
    impl<'de, T: Deserialize<'de>, C: Default> Visitor<'de> for Items<T, C> {
        type Value = C;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<C, A::Error> {
            let mut out = C::default();
            while let Some(item) = seq.next_element::<T>()? {
                (self.push)(&mut out, item);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Items {
        expecting,
        push,
        item: PhantomData,
    })
}
