import pytest

pytest.importorskip("rclpy")
