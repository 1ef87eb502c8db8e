//! Workloads, apart from the engines that carry them: [`tcp`] (a TCP
//! connection as netperf TCP_STREAM drives it, with its ideal peer; any
//! engine that carries IP packets, Ethernet or ATM, can hold one) and
//! [`diskbench`] (sequential I/Os kept outstanding against a disk array; any
//! storage engine can run them).

pub mod diskbench;
pub mod tcp;
