// The libraries are built with hidden visibility; only what is marked with
// this (through the export lists) is part of their ABI.
#pragma once

#define GPUSLICE_FAKE_EXPORT __attribute__((visibility("default")))
