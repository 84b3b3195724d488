//! The stages the campaign runs as its phases, called directly: none of them knows the
//! orchestrator, so the imports run one way (campaign → stage).
//!
//! | module | phases |
//! |---|---|
//! | [`build`] | `build` (resumable, rebuilds what build.json no longer describes), `kat` |
//! | [`profile`] | `baseline`, `profile`, `hashcost`; the survey merge after `publish` |
//! | [`ct`] | `ct` (not part of `all`) |
//! | [`count`] | `count` (part of `all`; done without valgrind) |
//! | [`pages`] | after `publish`: validate's check of the new tree, the pages it changes |

pub mod build;
pub mod count;
pub mod ct;
pub mod pages;
pub mod profile;
