# Written by `syncsim plot`; run `gnuplot docs/capacity-gpus-mfu.svg.gp` to redraw.
set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'
set output "docs/capacity-gpus-mfu.svg"
set title "capacity-gpus.yaml: Llama-3-70B DDP on H100, packed on a 4096-GPU spine-leaf (800G uplinks)"
set xlabel "GPUs in the job (workload.data_parallel)"
set ylabel "MFU"
set grid
set key below
set datafile separator '\t'
set logscale x
set xtics (256, 512, 1024, 2048, 4096)
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05
$d0 << EOD
256	0.33123008577773155	256
512	0.3238175925412893	512
1024	0.31555214925215136	1024
2048	0.3093242974340276	2048
4096	0.3024634012543164	4096
EOD
$d1 << EOD
256	0.33118464452727786	256
512	0.3238118398841927	512
1024	0.3155521492581651	1024
2048	0.3093225209344299	2048
4096	0.3024639228935804	4096
EOD
$d2 << EOD
256	0.5360674392200174	256
512	0.5254825419717192	512
1024	0.5148763538422478	1024
2048	0.504674554730662	2048
4096	0.49435235084933193	4096
EOD
$d3 << EOD
256	0.5355533699739925	256
512	0.5240422518022368	512
1024	0.5142072051310363	1024
2048	0.5015545103525979	2048
4096	0.4932987689201875	4096
EOD
plot $d0 using 1:2 with linespoints lw 2 lc 1 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=1", \
     $d1 using 1:2 with linespoints lw 2 lc 1 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=400Gbps, fabric.spine_leaf.oversubscription=3", \
     $d2 using 1:2 with linespoints lw 2 lc 2 dt 1 pt 7 ps 1 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=1", \
     $d3 using 1:2 with linespoints lw 2 lc 2 dt 2 pt 4 ps 1.6 title "fabric.links.host.bandwidth=800Gbps, fabric.spine_leaf.oversubscription=3"
