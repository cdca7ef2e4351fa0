"""Dataset loaders (temporary)."""
from nodeweave.data.errors import DataFormatError, ChecksumError, ChecksumUnknownError, DownloadError  # noqa: F401
from nodeweave.data.dataset import Dataset, Subset  # noqa: F401
from nodeweave.data.planetoid import (PlanetoidDataset, CoraGraphDataset, CiteseerGraphDataset,  # noqa: F401
                                      PubmedGraphDataset)
